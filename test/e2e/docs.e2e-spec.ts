import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { adminHeaders } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

/**
 * The documentation cannot drift silently (issue 36): every relative link and anchor of README.md and
 * docs/*.md resolves, docs/configuration.md lists exactly the variables the configuration schema reads,
 * and every route of the whole OpenAPI document is in docs/api.md, or, for the operator's and the
 * sandbox's, in docs/operations.md and docs/sandbox.md.
 */
const ROOT = resolve(__dirname, '../..');
const DOCS = join(ROOT, 'docs');
const PAGES = [join(ROOT, 'README.md'), ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).map((name) => join(DOCS, name))];
const show = (file: string) => relative(ROOT, file);

/** A page's text outside fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` in code no link). */
function prose(file: string): string[] {
  let fenced = false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    });
}

/** GitHub's anchor for a heading: its text without markup, lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(file)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every relative link target of a page, `[text](target)` and `![alt](target)`, outside code. */
function links(file: string): string[] {
  const targets: string[] = [];
  for (const line of prose(file)) {
    const text = line.replace(/`[^`]*`/g, '');
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(match[1])) targets.push(match[1]);
    }
  }
  return targets;
}

function brokenLinks(): string[] {
  const problems: string[] = [];
  for (const file of PAGES) {
    for (const target of links(file)) {
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const destination = path === '' ? file : resolve(dirname(file), decodeURI(path));
      if (!existsSync(destination)) {
        problems.push(`${show(file)}: link to ${target}: ${show(destination)} does not exist`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!destination.endsWith('.md')) {
        problems.push(`${show(file)}: link to ${target}: an anchor into a file that is not markdown`);
      } else if (!anchors(destination).has(decodeURIComponent(anchor).toLowerCase())) {
        problems.push(`${show(file)}: link to ${target}: ${show(destination)} has no heading with the anchor #${anchor}`);
      }
    }
  }
  return problems;
}

/** The variables the configuration schema reads: the properties of its class EnvironmentVariables. */
function schemaVariables(): Set<string> {
  const source = readFileSync(join(ROOT, 'src/config/env.schema.ts'), 'utf8');
  const body = /export class EnvironmentVariables \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
  return new Set([...body.matchAll(/^ {2}([A-Z][A-Z0-9_]*)[?!]?\s*[:=]/gm)].map((match) => match[1]));
}

/** The variables docs/configuration.md documents: those named in the first cell of its tables' rows. */
function documentedVariables(): Set<string> {
  const names = new Set<string>();
  for (const line of prose(join(DOCS, 'configuration.md'))) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1] ?? '';
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]);
  }
  return names;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const shape = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/+$/, '');

/** Where a route must be documented: the operator's in operations.md, the sandbox's in sandbox.md, the rest in api.md. */
function pageFor(path: string): string {
  if (/^\/(admin|metrics)(\/|$)/.test(path)) return 'operations.md';
  if (/^\/api\/sandbox(\/|$)/.test(path)) return 'sandbox.md';
  return 'api.md';
}

/** The routes a page names, as `METHOD /path` (several methods may share a path: `GET`, `PUT /admin/settings`). */
function documentedRoutes(page: string): Set<string> {
  const text = readFileSync(join(DOCS, page), 'utf8');
  return new Set([...text.matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[^\s`?)|,<]*)/g)].map((match) => `${match[1]} ${shape(match[2])}`));
}

describe('The documentation', () => {
  it('has every relative link and anchor of README.md and docs/*.md resolving', () => {
    expect(brokenLinks()).toEqual([]);
  });

  it('lists in docs/configuration.md every variable the configuration schema reads, and no other', () => {
    const schema = schemaVariables();
    const documented = documentedVariables();
    expect(schema.size).toBeGreaterThan(40);
    const undocumented = [...schema].filter((name) => !documented.has(name)).map((name) => `${name} is read by src/config/env.schema.ts but not in docs/configuration.md`);
    const unknown = [...documented].filter((name) => !schema.has(name)).map((name) => `${name} is in docs/configuration.md but src/config/env.schema.ts does not read it`);
    expect([...undocumented, ...unknown]).toEqual([]);
  });

  describe('against the OpenAPI document', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startApp();
    });
    afterAll(() => t.close());

    it('documents every route: the public API in docs/api.md, the operator API in docs/operations.md, the sandbox in docs/sandbox.md', async () => {
      const document = (await t.http.get('/admin/docs-json').set(adminHeaders).expect(200)).body as { paths: Record<string, Record<string, unknown>> };
      const routes = Object.entries(document.paths).flatMap(([path, item]) => METHODS.filter((method) => method in item).map((method) => ({ method: method.toUpperCase(), path })));
      expect(routes.length).toBeGreaterThan(40);
      const pages = new Map<string, Set<string>>();
      const missing = routes
        .filter(({ method, path }) => {
          const page = pageFor(path);
          if (!pages.has(page)) pages.set(page, documentedRoutes(page));
          return !pages.get(page)?.has(`${method} ${shape(path)}`);
        })
        .map(({ method, path }) => `${method} ${path} is in the OpenAPI document but not in docs/${pageFor(path)}`);
      expect(missing).toEqual([]);
    });
  });
});
