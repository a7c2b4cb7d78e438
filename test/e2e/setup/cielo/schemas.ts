import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * cielo-ecommerce-3.0.schemas.json (draft 2020-12, written from Cielo's public docs) as the judge of every
 * request the adapter sends the simulator and every answer and notification the simulator makes.
 */
const SCHEMAS_FILE = process.env.CIELO_SCHEMAS_FILE ?? resolve(__dirname, '../../../../../shared/reference/cielo-ecommerce-3.0.schemas.json');
const SCHEMAS_ID = 'cielo-ecommerce-3.0.schemas.json';

export type CieloSchemaName =
  | 'SaleRequest'
  | 'SaleResponse'
  | 'CaptureVoidResponse'
  | 'ErrorList'
  | 'MerchantOrderQueryResponse'
  | 'CardTokenRequest'
  | 'CardTokenResponse'
  | 'ZeroAuthRequest'
  | 'ZeroAuthResponse'
  | 'Notification';

/** One thing off a schema: `path` is the JSON path in dots (`Payment.CreditCard.Brand`), empty for the root. */
export interface SchemaError {
  path: string;
  keyword: string;
  /** The property a `required` or `additionalProperties` error names. */
  property?: string;
  message: string;
}

let ajv: Ajv2020 | null = null;
const validators = new Map<string, ValidateFunction>();

function validator(name: CieloSchemaName): ValidateFunction {
  const cached = validators.get(name);
  if (cached) return cached;
  if (!ajv) {
    let schemas: Record<string, unknown>;
    try {
      schemas = JSON.parse(readFileSync(SCHEMAS_FILE, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`Cielo schemas not found at ${SCHEMAS_FILE} (set CIELO_SCHEMAS_FILE): ${(error as Error).message}`);
    }
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(schemas, SCHEMAS_ID);
  }
  const compiled = ajv.compile({ $ref: `${SCHEMAS_ID}#/$defs/${name}` });
  validators.set(name, compiled);
  return compiled;
}

/** The errors of `data` as `$defs/<name>`, once each (oneOf/if branches repeat themselves); empty when valid. */
export function schemaErrors(name: CieloSchemaName, data: unknown): SchemaError[] {
  const validate = validator(name);
  if (validate(data)) return [];
  const seen = new Set<string>();
  const found: SchemaError[] = [];
  for (const error of validate.errors ?? []) {
    // `if` only says which `then` failed; the `then`'s own error is reported too.
    if (error.keyword === 'if') continue;
    const one = schemaError(error);
    const text = errorText(one);
    if (!seen.has(text)) found.push(one);
    seen.add(text);
  }
  return found;
}

/** What is wrong with `data` as `$defs/<name>` of the schemas file, as text (empty: nothing). */
export function validateCielo(name: CieloSchemaName, data: unknown): string[] {
  return schemaErrors(name, data).map(errorText);
}

export function errorText(error: SchemaError): string {
  return `${error.path || '(root)'}: ${error.message}`;
}

function schemaError(error: ErrorObject): SchemaError {
  const params = error.params as Record<string, unknown>;
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  let property: string | undefined;
  let message = error.message ?? error.keyword;
  if (error.keyword === 'required') property = String(params.missingProperty);
  if (error.keyword === 'additionalProperties') {
    property = String(params.additionalProperty);
    message = `${message} (${property})`;
  }
  if (error.keyword === 'enum') message = `${message} (${(params.allowedValues as unknown[]).join(', ')})`;
  return { path, keyword: error.keyword, ...(property !== undefined ? { property } : {}), message };
}
