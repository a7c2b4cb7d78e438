import { FieldError } from './domain-error';

/**
 * Limits every request body and query meets before any transformation or validation work. maxKeys: the
 * fields of one object; class-transformer's work grows faster than their number (60,000 keys held the
 * refunds route 6.8 s, issue 35 M3), and no request of this API has more than a few dozen.
 */
export const REQUEST_LIMITS = { maxDepth: 16, maxArrayLength: 1000, maxStringLength: 100_000, maxKeys: 1000 } as const;

/** Characters PostgreSQL cannot store in text or jsonb: NUL, and UTF-16 surrogates that are not paired. */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const pathOf = (parent: string, key: string | number): string =>
  typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key;

/**
 * The first problem of a parsed JSON body or query (pure, iterative, so no input can exhaust the stack):
 * nesting deeper than maxDepth, an array longer than maxArrayLength, an object with more than maxKeys
 * fields, a string (value or key) longer than maxStringLength or holding characters PostgreSQL cannot store. Null when the shape is acceptable.
 */
export function requestShapeProblem(value: unknown, limits = REQUEST_LIMITS): FieldError | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    const field = path || 'body';
    if (typeof current === 'string') {
      if (current.length > limits.maxStringLength) return { field, message: `must be at most ${limits.maxStringLength} characters` };
      if (UNSTORABLE.test(current)) return { field, message: 'holds characters that cannot be stored (NUL or an unpaired surrogate)' };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limits.maxDepth) return { field, message: `nests deeper than ${limits.maxDepth} levels` };
    if (Array.isArray(current)) {
      if (current.length > limits.maxArrayLength) return { field, message: `must have at most ${limits.maxArrayLength} entries` };
      current.forEach((item, index) => stack.push({ value: item, path: pathOf(path, index), depth: depth + 1 }));
      continue;
    }
    const keys = Object.keys(current);
    if (keys.length > limits.maxKeys) return { field, message: `must have at most ${limits.maxKeys} fields` };
    for (const key of keys) {
      const item = (current as Record<string, unknown>)[key];
      if (key.length > 200 || UNSTORABLE.test(key)) return { field: pathOf(path, key.slice(0, 40)), message: 'is not an acceptable field name' };
      stack.push({ value: item, path: pathOf(path, key), depth: depth + 1 });
    }
  }
  return null;
}

/**
 * A path segment that is not valid percent-encoding (`%ZZ`, `%E0%A4%A`) or that decodes to text
 * PostgreSQL cannot store (`%00`): refused before any route runs, whatever route it was meant for.
 */
export function pathShapeProblem(path: string): FieldError | null {
  for (const segment of path.split('/')) {
    if (!segment.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return { field: 'path', message: 'holds a malformed percent-encoding' };
    }
    if (UNSTORABLE.test(decoded)) return { field: 'path', message: 'holds characters that cannot be stored (NUL or an unpaired surrogate)' };
  }
  return null;
}
