import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
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

/**
 * `copies` more subscriptions exactly like `templateId` (seller, card, amount, dates, period), written
 * straight into the table: the setup of a test about many subscriptions, not what it tests.
 */
export async function copySubscription(db: DataSource, templateId: number, copies: number): Promise<void> {
  await db.query(
    `INSERT INTO subscriptions (provider, seller_id, status, billing_cycle, amount_cents, payment_method, card_token, card_last_four, card_brand,
                                customer_name, customer_email, product_id, product_name, trial_days, next_billing_date, started_at,
                                current_period, period_due_at, period_attempts, total_billings, successful_billings, last_payment_status)
     SELECT provider, seller_id, status, billing_cycle, amount_cents, payment_method, card_token, card_last_four, card_brand,
            customer_name, customer_email, product_id, product_name, trial_days, next_billing_date, started_at,
            current_period, period_due_at, period_attempts, total_billings, successful_billings, last_payment_status
       FROM subscriptions, generate_series(1, $2) WHERE id = $1`,
    [templateId, copies],
  );
}
