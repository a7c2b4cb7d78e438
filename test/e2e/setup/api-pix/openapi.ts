import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * The BCB's API Pix document (OpenAPI 3.0, release 2.9.0) as the judge of every request the gateway sends
 * and every answer the simulator gives. Schemas are compiled with Ajv straight out of the document (added
 * whole under one id, so its `#/components/...` references resolve), after three readings written down here:
 *
 * - Patterns. Some are JavaScript regex literals (`"/^\\d{11}$/"`, `"/^\\d{7}$/"`): as JSON Schema patterns
 *   they would refuse every CPF. Their slashes are dropped. Most others are unanchored (`"\\d{1,10}\\.\\d{2}"`,
 *   `"[a-zA-Z0-9]{26,35}"`), which JSON Schema reads as "contains": "x1.00y" would be an amount and a
 *   40-character txid a txid. The document means the whole value, so every pattern is anchored `^(?:…)$`.
 * - Errata. `PixConsultados` requires `cobs` (copied from `CobsConsultadas`) while it defines `pix`, as its
 *   example and every PSP answer: the requirement is read as `pix`. A `location` is typed `format: uri`,
 *   but the document's examples and the BR Code manual write it without a scheme
 *   ("pix.example.com/qr/v2/…"): there it may have none.
 * - OpenAPI keywords Ajv does not know (`example`, and `default` values of the wrong type) are ignored
 *   (`strict: false`); `nullable` is Ajv's own; `readOnly` is an annotation.
 * - Pix Automático (`/locrec`, `/rec`, `/cobr`, their webhooks) has defects of its own that would refuse every
 *   request and answer, even the document's examples: they are read as the document means them in one
 *   place, `PIX_AUTOMATICO_ERRATA` below, each with what it fixes.
 */
const DOCUMENT_FILE = process.env.API_PIX_OPENAPI_FILE ?? resolve(__dirname, '../../../../../shared/reference/bcb-api-pix-2.9.0.openapi.yaml');
const DOCUMENT_ID = 'bcb-api-pix-2.9.0';

type Json = Record<string, unknown>;

/** One thing off the document: `property` names where (`body.valor.original`, `query.fim`, `path.txid`). */
export interface PixViolation {
  property: string;
  reason: string;
}

export interface RequestParts {
  params?: Record<string, string>;
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
}

export function violationText(violation: PixViolation): string {
  return `${violation.property}: ${violation.reason}`;
}

/** What is wrong with a request to `method pathTemplate` (a template of the document: `/cob/{txid}`). */
export function validateRequest(method: string, pathTemplate: string, parts: RequestParts): string[] {
  return checkRequest(method, pathTemplate, parts).map(violationText);
}

/** What is wrong with an answer; `contentType`, when given, must be one the document declares for it. */
export function validateResponse(method: string, pathTemplate: string, status: number, body: unknown, contentType?: string): string[] {
  return checkResponse(method, pathTemplate, status, body, contentType).map(violationText);
}

/** The webhook callbacks: `POST {webhookUrl}/pix`, `/rec` and `/cobr`, and the request body each carries. */
export type WebhookKind = 'pix' | 'rec' | 'cobr';
const WEBHOOK_BODIES: Record<WebhookKind, string> = { pix: 'WebhookPixBody', rec: 'WebhookRecBody', cobr: 'WebhookCobRBody' };

/** What is wrong with a webhook callback body (`WebhookPixBody`, `WebhookRecBody` or `WebhookCobRBody`). */
export function validateWebhookBody(body: unknown, kind: WebhookKind = 'pix'): string[] {
  const schema = follow(['components', 'requestBodies', WEBHOOK_BODIES[kind]]);
  return schemaViolations('body', [...schema.pointer, 'content', 'application/json', 'schema'], body).map(violationText);
}

/** The OAuth scopes the document defines, and the ones an operation needs. */
export function documentScopes(): string[] {
  const schemes = get(document(), ['components', 'securitySchemes', 'OAuth2', 'flows', 'clientCredentials', 'scopes']) as Json;
  return Object.keys(schemes);
}

export function operationScopes(method: string, pathTemplate: string): string[] {
  const security = (operation(method, pathTemplate).node.security ?? []) as Array<Record<string, string[]>>;
  return security.flatMap((requirement) => requirement.OAuth2 ?? []);
}

export function checkRequest(method: string, pathTemplate: string, parts: RequestParts): PixViolation[] {
  const op = operation(method, pathTemplate);
  return [...parameterViolations(op, parts), ...bodyViolations(op, parts.body)];
}

export function checkResponse(method: string, pathTemplate: string, status: number, body: unknown, contentType?: string): PixViolation[] {
  const op = operation(method, pathTemplate);
  const declared = (op.node.responses as Json)[String(status)] as Json | undefined;
  if (!declared) return undeclaredStatusViolations(status, body);
  const response = follow([...op.pointer, 'responses', String(status)]);
  const content = response.node.content as Json | undefined;
  if (!content) return body === undefined ? [] : [{ property: 'body', reason: `status ${status} declares no body` }];
  const mediaType = contentType?.split(';')[0].trim().toLowerCase() ?? Object.keys(content)[0];
  if (!(mediaType in content)) return [{ property: 'content-type', reason: `${mediaType} is not declared for status ${status} (${Object.keys(content).join(', ')})` }];
  return schemaViolations('body', [...response.pointer, 'content', mediaType, 'schema'], body);
}

/** What is wrong with an RFC 7807 body as the document's `Problema`: for answers outside its operations. */
export function checkProblem(body: unknown): PixViolation[] {
  return schemaViolations('body', ['components', 'schemas', 'Problema'], body);
}

/**
 * The document's general errors (RequisicaoInvalida, AcessoNegado, … ServicoIndisponivel) may come from any
 * endpoint as RFC 7807 problems, as may the 401 of the security layer it leaves to the security manual.
 * A success status an operation does not declare is a violation.
 */
function undeclaredStatusViolations(status: number, body: unknown): PixViolation[] {
  if (status < 400) return [{ property: 'status', reason: `${status} is not declared for this operation` }];
  return checkProblem(body);
}

interface Operation {
  node: Json;
  pointer: string[];
  pathPointer: string[];
}

function operation(method: string, pathTemplate: string): Operation {
  const pathPointer = ['paths', pathTemplate];
  const node = get(document(), [...pathPointer, method.toLowerCase()]) as Json | undefined;
  if (!node) throw new Error(`the API Pix document has no operation ${method.toUpperCase()} ${pathTemplate}`);
  return { node, pointer: [...pathPointer, method.toLowerCase()], pathPointer };
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  pointer: string[];
}

/** Path-level and operation-level parameters, each followed through its `$ref`. */
function parameters(op: Operation): Parameter[] {
  const declared = (owner: string[]) => ((get(document(), [...owner, 'parameters']) ?? []) as Json[]).map((_, i) => follow([...owner, 'parameters', String(i)]));
  return [...declared(op.pathPointer), ...declared(op.pointer)].map(({ node, pointer }) => ({
    name: node.name as string,
    in: node.in as string,
    required: node.required as boolean | undefined,
    pointer,
  }));
}

function parameterViolations(op: Operation, parts: RequestParts): PixViolation[] {
  const declared = parameters(op);
  const found: PixViolation[] = [];
  for (const parameter of declared.filter((p) => p.in === 'path' || p.in === 'query')) {
    const value = parameter.in === 'path' ? parts.params?.[parameter.name] : parts.query?.[parameter.name];
    const property = `${parameter.in}.${parameter.name}`;
    if (value === undefined) {
      if (parameter.required) found.push({ property, reason: 'is required' });
    } else if (Array.isArray(value)) {
      found.push({ property, reason: 'is repeated' });
    } else {
      found.push(...parameterValueViolations(property, parameter.pointer, value));
    }
  }
  const known = new Set(declared.filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of Object.keys(parts.query ?? {})) {
    if (!known.has(name)) found.push({ property: `query.${name}`, reason: 'is not a parameter of this operation' });
  }
  return found;
}

/** A parameter arrives as text: it is checked with type coercion ("2" is the integer 2, "true" a boolean). */
function parameterValueViolations(property: string, pointer: string[], value: string): PixViolation[] {
  const validate = validator([...pointer, 'schema'], 'coercing');
  return validate({ value }) ? [] : ajvViolations(property, validate.errors, '/value');
}

function bodyViolations(op: Operation, body: unknown): PixViolation[] {
  if (!op.node.requestBody) return body === undefined ? [] : [{ property: 'body', reason: 'this operation takes no body' }];
  const requestBody = follow([...op.pointer, 'requestBody']);
  if (body === undefined) return requestBody.node.required ? [{ property: 'body', reason: 'is required' }] : [];
  return schemaViolations('body', [...requestBody.pointer, 'content', 'application/json', 'schema'], body);
}

function schemaViolations(property: string, schemaPointer: string[], data: unknown): PixViolation[] {
  const validate = validator(schemaPointer, 'strict');
  return validate(data) ? [] : ajvViolations(property, validate.errors);
}

/** Ajv's errors as violations, once each (allOf/oneOf branches repeat the same complaint). */
function ajvViolations(property: string, errors: ErrorObject[] | null | undefined, strip = ''): PixViolation[] {
  const texts = new Set<string>();
  const found: PixViolation[] = [];
  for (const error of errors ?? []) {
    const path = error.instancePath.slice(strip.length).split('/').filter(Boolean).join('.');
    const violation = { property: path ? `${property}.${path}` : property, reason: reason(error) };
    const text = violationText(violation);
    if (!texts.has(text)) found.push(violation);
    texts.add(text);
  }
  return found;
}

function reason(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `${error.message} (${String(params.additionalProperty)})`;
  if (error.keyword === 'enum') return `${error.message} (${(params.allowedValues as unknown[]).join(', ')})`;
  return error.message ?? error.keyword;
}

let loaded: Json | null = null;

/** The document, read once and with the readings of this file's header applied. */
function document(): Json {
  if (loaded) return loaded;
  let text: string;
  try {
    text = readFileSync(DOCUMENT_FILE, 'utf8');
  } catch (error) {
    throw new Error(`API Pix document not found at ${DOCUMENT_FILE} (set API_PIX_OPENAPI_FILE): ${(error as Error).message}`);
  }
  const parsed = parse(text) as Json;
  anchorPatterns(parsed);
  applyErrata(parsed);
  loaded = parsed;
  return parsed;
}

/** Every `pattern` as an anchored ECMAScript source, its regex-literal slashes dropped. */
function anchorPatterns(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(anchorPatterns);
  if (!node || typeof node !== 'object') return;
  const object = node as Json;
  if (typeof object.pattern === 'string') object.pattern = anchoredPattern(object.pattern);
  Object.values(object).forEach(anchorPatterns);
}

export function anchoredPattern(pattern: string): string {
  const literal = /^\/(.*)\/[a-z]*$/s.exec(pattern);
  const source = (literal ? literal[1] : pattern).replace(/^\^/, '').replace(/(?<!\\)\$$/, '');
  return `^(?:${source})$`;
}

function applyErrata(doc: Json): void {
  const pixConsultados = get(doc, ['components', 'schemas', 'PixConsultados']) as Json;
  pixConsultados.required = (pixConsultados.required as string[]).map((name) => (name === 'cobs' ? 'pix' : name));
  relaxLocations(doc);
  for (const erratum of PIX_AUTOMATICO_ERRATA) erratum.apply((path) => get(doc, path) as Json);
}

/**
 * The Pix Automático defects of the document (release 2.9.0), read as it means them. Nothing else in the
 * simulator works around them. Each would otherwise refuse what the document itself shows as right.
 */
const PIX_AUTOMATICO_ERRATA: Array<{ defect: string; apply(at: (path: string[]) => Json): void }> = [
  {
    defect: "RecBase requires `idRec` (not one of its properties: POST /rec has none) and `retentativa` (defined nowhere; the field is politicaRetentativa)",
    apply: (at) => dropRequired(at(['components', 'schemas', 'RecBase']), ['idRec', 'retentativa']),
  },
  {
    defect: 'RecNotification requires `atualizacao"` (a missing quote in the YAML makes the quote part of the name)',
    apply: (at) => {
      const schema = at(['components', 'schemas', 'RecNotification']);
      schema.required = (schema.required as string[]).map((name) => name.replace(/"$/, ''));
    },
  },
  {
    defect: 'DadosPagadorRec requires `ispbParticipante` next to `pagador`, where it is not a property: it belongs inside `pagador`',
    apply: (at) => {
      const schema = at(['components', 'schemas', 'DadosPagadorRec']);
      dropRequired(schema, ['ispbParticipante']);
      ((schema.properties as Json).pagador as Json).required = ['ispbParticipante'];
    },
  },
  {
    defect: 'PayloadLocationRecGerada requires `tipo`, which it does not define and no example has',
    apply: (at) => dropRequired(at(['components', 'schemas', 'PayloadLocationRecGerada']), ['tipo']),
  },
  {
    defect: 'POST /locrec declares no request body, though PayloadLocationRecBody ({"tipo":"rec"}) exists for it: either is accepted',
    apply: (at) => {
      at(['paths', '/locrec', 'post']).requestBody = {
        required: false,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/PayloadLocationRecSolicitada' } } },
      };
    },
  },
  {
    defect: 'PixAutomatico.valor is a string with an anyOf of object schemas (PixValorOriginal…), which no string satisfies: a money string',
    apply: (at) => delete ((at(['components', 'schemas', 'PixAutomatico']).properties as Json).valor as Json).anyOf,
  },
  {
    defect:
      'The `encerramento` of RecEncerramento and CobRAtualizacao is a oneOf of {rejeicao} and {cancelamento} with neither required, so any encerramento matches both branches and fails the oneOf: each branch requires its field',
    apply: (at) => {
      for (const owner of [at(['components', 'schemas', 'RecEncerramento']), at(['components', 'schemas', 'CobRAtualizacao'])]) {
        const branches = ((owner.properties as Json).encerramento as Json).oneOf as Json[];
        for (const branch of branches) branch.required = Object.keys(branch.properties as Json);
      }
    },
  },
  {
    defect: 'RecRevisada.vinculo.devedor is a oneOf of two identical {nome} schemas, which any devedor matches twice: anyOf',
    apply: (at) => {
      const revised = (at(['components', 'schemas', 'RecRevisada']).allOf as Json[]).find((part) => (part.properties as Json | undefined)?.vinculo) as Json;
      const devedor = (((revised.properties as Json).vinculo as Json).properties as Json).devedor as Json;
      devedor.anyOf = devedor.oneOf;
      delete devedor.oneOf;
    },
  },
];

function dropRequired(schema: Json, names: string[]): void {
  schema.required = (schema.required as string[]).filter((name) => !names.includes(name));
}

/** A `location` property typed `format: uri` gets the format `pix-location` (scheme optional). */
function relaxLocations(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(relaxLocations);
  if (!node || typeof node !== 'object') return;
  const properties = (node as Json).properties as Json | undefined;
  const location = properties?.location as Json | undefined;
  if (location?.format === 'uri') location.format = 'pix-location';
  Object.values(node as Json).forEach(relaxLocations);
}

function isPixLocation(text: string): boolean {
  if (/\s/.test(text)) return false;
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).hostname.length > 0;
  } catch {
    return false;
  }
}

type Mode = 'strict' | 'coercing';
const ajvs = new Map<Mode, Ajv>();
const validators = new Map<string, ValidateFunction>();

/** Bodies are checked as they are; parameters (text in a URL) with Ajv's type coercion. */
function ajv(mode: Mode): Ajv {
  const existing = ajvs.get(mode);
  if (existing) return existing;
  const created = new Ajv({ strict: false, allErrors: true, validateSchema: false, coerceTypes: mode === 'coercing' });
  addFormats(created);
  created.addFormat('pix-location', isPixLocation);
  created.addSchema(document(), DOCUMENT_ID);
  ajvs.set(mode, created);
  return created;
}

/** The compiled schema at a JSON pointer into the document (for a parameter, wrapped as `{ value }`). */
function validator(pointer: string[], mode: Mode): ValidateFunction {
  const key = `${mode} ${pointer.join('/')}`;
  const cached = validators.get(key);
  if (cached) return cached;
  const ref = { $ref: `${DOCUMENT_ID}#${fragment(pointer)}` };
  const schema = mode === 'coercing' ? { type: 'object', properties: { value: ref } } : ref;
  const compiled = ajv(mode).compile(schema);
  validators.set(key, compiled);
  return compiled;
}

/** A JSON pointer as a URI fragment: `~` and `/` escaped (RFC 6901), then percent-encoded (`{txid}`). */
function fragment(pointer: string[]): string {
  return pointer.map((token) => `/${encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'))}`).join('');
}

/** Follows OpenAPI `$ref`s (to a request body, response or parameter) from the node at `pointer`. */
function follow(pointer: string[]): { node: Json; pointer: string[] } {
  let at = pointer;
  let node = get(document(), at) as Json;
  while (typeof node.$ref === 'string') {
    at = node.$ref.replace(/^#\//, '').split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
    node = get(document(), at) as Json;
  }
  return { node, pointer: at };
}

function get(root: unknown, pointer: string[]): unknown {
  return pointer.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Json)[key] : undefined), root);
}
