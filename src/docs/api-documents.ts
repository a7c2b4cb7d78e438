import { Injectable } from '@nestjs/common';
import { OpenAPIObject } from '@nestjs/swagger';

/** The operator API and its metrics, and the sandbox provider's routes. */
const OPERATOR_PATH = /^\/(admin|metrics)(\/|$)/;
const SANDBOX_PATH = /^\/api\/sandbox(\/|$)/;

/** What the public reference (/docs, /docs-json) lists beyond the public API. */
export interface PublicReach {
  operator: boolean;
  sandbox: boolean;
}

/**
 * The public reference: the whole document without the operator or sandbox routes it must not show, and
 * without the schemas and security schemes only those routes used (their names tell what exists too).
 */
export function publicDocument(whole: OpenAPIObject, reach: PublicReach): OpenAPIObject {
  if (reach.operator && reach.sandbox) return whole;
  const paths = Object.fromEntries(
    Object.entries(whole.paths).filter(([path]) => (reach.operator || !OPERATOR_PATH.test(path)) && (reach.sandbox || !SANDBOX_PATH.test(path))),
  );
  const schemas = whole.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const name = key === '$ref' && typeof value === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(value)?.[1] : undefined;
      if (name !== undefined && !used.has(name)) {
        used.add(name);
        visit(schemas[name]);
      } else visit(value);
    }
  };
  visit(paths);
  const schemes = new Set(
    Object.values(paths).flatMap((item) =>
      Object.values(item as Record<string, { security?: Array<Record<string, unknown>> }>).flatMap((operation) => (operation.security ?? []).flatMap(Object.keys)),
    ),
  );
  return {
    ...whole,
    paths,
    components: {
      ...whole.components,
      schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
      securitySchemes: Object.fromEntries(Object.entries(whole.components?.securitySchemes ?? {}).filter(([name]) => schemes.has(name))),
    },
  };
}

/** The whole OpenAPI document, for the operator (GET /admin/docs-json); configureApp builds it once. */
@Injectable()
export class ApiDocumentStore {
  private whole: OpenAPIObject | null = null;

  set(document: OpenAPIObject): void {
    this.whole = document;
  }

  get(): OpenAPIObject {
    if (!this.whole) throw new Error('the OpenAPI document is built by configureApp');
    return this.whole;
  }
}
