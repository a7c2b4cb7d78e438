/**
 * Loaded before every e2e file (jest setupFilesAfterEnv): puts the contract check (contract.ts) on every
 * answer the file receives through supertest or fetch, and fails a test whose receivers got a postback or
 * webhook body off the spec. A test that means to read an answer off the contract cannot: there is none.
 */
import { Test } from 'supertest';
import { answerViolation, pendingViolations } from './contract';
import { rememberSecretsOf } from '../standard-webhooks';

interface SuperagentResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: unknown;
  text?: string;
}
type AssertFn = (this: Test, resError: Error | null, res: SuperagentResponse | undefined, fn: (error: Error | null, res?: SuperagentResponse) => void) => void;

export class ContractViolation extends Error {}

const testPrototype = (Test as unknown as { prototype: { assert: AssertFn } }).prototype;
const originalAssert = testPrototype.assert;
testPrototype.assert = function (this: Test & { method: string; url: string }, resError, res, fn) {
  if (res) {
    const body = parsedBody(res);
    rememberSecretsOf(body);
    const violation = answerViolation(this.method, this.url, res.status, res.headers['content-type'], body);
    if (violation) return fn.call(this, new ContractViolation(`answer off the spec's contract: ${violation}`), res);
  }
  return originalAssert.call(this, resError, res, fn);
};

/** superagent leaves `body` as {} for a JSON body it could not parse; the text is the truth. */
function parsedBody(res: SuperagentResponse): unknown {
  if (typeof res.text !== 'string') return res.body;
  try {
    return JSON.parse(res.text);
  } catch {
    return res.body;
  }
}

const originalFetch = globalThis.fetch;
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await originalFetch(input, init);
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  const contentType = response.headers.get('content-type') ?? undefined;
  let body: unknown;
  if (/^application\/json/i.test(contentType ?? '')) {
    const text = await response.clone().text();
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  rememberSecretsOf(body);
  const violation = answerViolation(method, url, response.status, contentType, body);
  if (violation) throw new ContractViolation(`answer off the spec's contract: ${violation}`);
  return response;
};

afterEach(() => {
  const found = pendingViolations.splice(0);
  if (found.length > 0) throw new ContractViolation(`deliveries off the spec's contract:\n${found.join('\n')}`);
});
