import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN, TestApp } from './test-app';

export interface TestSeller {
  id: number;
  publicKey: string;
  privateKey: string;
  postbackSecret: string;
  /** Headers that authenticate as this seller. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export const adminHeaders = { 'X-Admin-Token': ADMIN_TOKEN };

/** A new seller made through the operator API, with its first key pair. */
export async function createSeller(t: TestApp, overrides: Record<string, unknown> = {}): Promise<TestSeller> {
  const response = await t.http
    .post('/admin/sellers')
    .set(adminHeaders)
    .send({ name: 'Loja Teste', email: `loja-${randomUUID()}@example.com`, ...overrides })
    .expect(201);
  const { seller, credentials, postbackSecret } = response.body;
  return {
    id: seller.id,
    publicKey: credentials.publicKey,
    privateKey: credentials.privateKey,
    postbackSecret,
    headers: { 'X-Api-Public-Key': credentials.publicKey, 'X-Api-Private-Key': credentials.privateKey },
    body: response.body,
  };
}
