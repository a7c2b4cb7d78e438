import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { PixCertificates } from '../api-pix';
import { TestSeller } from '../factories';
import { freePort } from '../processes';
import { customer, saleBody } from '../sales';
import { startApp, TestApp } from '../test-app';
import { makeCertificates } from './index';
import { CieloSimulator } from './simulator';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** A payer's whole address, as a boleto is registered to it (customer.address). */
export const BOLETO_ADDRESS = { street: 'Avenida Paulista', streetNumber: '1000', complement: 'Apto 12', zipCode: '01310100', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' };

export interface BoletoGateway {
  cielo: CieloSimulator;
  t: TestApp;
  orderId(saleId: number): string;
  /** A boleto sale's body: 157.00, due in 5 days, the payer with BOLETO_ADDRESS; `overrides` on top. */
  boletoSale(overrides?: Json): Json;
  /** A boleto sale created (201), with the PaymentId Cielo gave it. */
  issue(seller: TestSeller, overrides?: Json): Promise<{ sale: Json; paymentId: string }>;
  /** The sandbox scheduler route for the seller, at `now` (the real clock when omitted). */
  scheduler(seller: TestSeller, now?: Date): Promise<Json>;
  /** The poll's lease on the sale given back: the next pass asks about it at once. */
  lapsePoll(saleId: number): Promise<unknown>;
  /** The kinds of the ledger postings of a sale, in order. */
  postingsOf(saleId: number): Promise<string[]>;
  /** The last POST /1/sales body the simulator received for the sale. */
  lastSaleRequest(saleId: number): Json;
  close(): Promise<void>;
}

/**
 * A gateway issuing boletos through Cielo (BOLETO_PROVIDER=cielo, cards on the sandbox) against a Cielo simulator
 * affiliated to `Simulado` and `BancoDoBrasil3`, listening on a port of its own so that Cielo's notifications (with
 * their static header, checked) reach it; the poll of issued boletos every second, the janitor only when a test
 * runs it (the sandbox scheduler route), the sandbox's clock allowed to run ahead. For issue 40's e2e files.
 */
export async function startBoletoGateway(options: { merchantKey: string; orderPrefix: string; clearingDays: number; env?: Record<string, string> }): Promise<BoletoGateway> {
  const headerName = 'X-Cielo-Secret';
  const headerValue = randomBytes(18).toString('base64url');
  const certs: PixCertificates = await makeCertificates();
  const cielo = await CieloSimulator.start({
    certs,
    merchantId: '3c9d1e2f-4a5b-4c6d-8e7f-0a1b2c3d4e5f',
    merchantKey: options.merchantKey,
    notificationHeaders: { [headerName]: headerValue },
    boletoBanks: ['Simulado', 'BancoDoBrasil3'],
  });
  const port = await freePort();
  const notificationUrl = `http://127.0.0.1:${port}/cielo/notifications/${randomBytes(16).toString('hex')}`;
  const t = await startApp({
    ...cielo.gatewayEnv(notificationUrl),
    CARD_PROVIDER: 'sandbox',
    BOLETO_PROVIDER: 'cielo',
    CIELO_BOLETO_PROVIDER: 'Simulado',
    CIELO_BOLETO_CLEARING_DAYS: String(options.clearingDays),
    CIELO_BOLETO_POLL_SECONDS: '1',
    CIELO_NOTIFICATION_HEADER: `${headerName}: ${headerValue}`,
    CIELO_ORDER_ID_PREFIX: options.orderPrefix,
    CIELO_TIMEOUT_MS: '1500',
    SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
    JANITOR_SECONDS: '3600',
    ...options.env,
  });
  await t.app.listen(port, '127.0.0.1');
  cielo.setNotificationUrl(notificationUrl);

  const orderId = (saleId: number) => `${options.orderPrefix}${saleId}`;
  const boletoSale = (overrides: Json = {}) => saleBody('BOLETO', { amount: 15_700, boleto: { expiresInDays: 5 }, customer: { ...customer, address: BOLETO_ADDRESS }, ...overrides });
  return {
    cielo,
    t,
    orderId,
    boletoSale,
    issue: async (seller, overrides = {}) => {
      const sale = (await t.http.post('/api/sales').set(seller.headers).send(boletoSale(overrides)).expect(201)).body.sale as Json;
      const [payment] = cielo.payments(orderId(sale.id));
      return { sale, paymentId: payment.paymentId as string };
    },
    scheduler: async (seller, now) => (await t.http.post('/api/sandbox/scheduler/run').set(seller.headers).send(now ? { now: now.toISOString() } : {}).expect(200)).body as Json,
    lapsePoll: (saleId) => t.db.query(`UPDATE sales SET provider_checked_at = NULL WHERE id = $1`, [saleId]),
    postingsOf: async (saleId) =>
      (await t.db.query(`SELECT kind FROM ledger_postings WHERE reference_type = 'SALE' AND reference_id = $1 ORDER BY id`, [saleId])).map((row: Json) => row.kind as string),
    lastSaleRequest: (saleId) => cielo.requestsOf('sale').filter((one) => one.merchantOrderId === orderId(saleId)).at(-1)?.body as Json,
    close: async () => {
      await t.close();
      await cielo.close();
      await rm(certs.dir, { recursive: true, force: true });
    },
  };
}
