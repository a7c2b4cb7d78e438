/**
 * The Cielo API E-commerce 3.0 simulator in a process of its own, for `CHAOS_CARDS=cielo npm run chaos`
 * (scripts/chaos.js), which SIGKILLs the service but must keep the acquirer alive across its lives. Run
 * through ts-node like the e2e process tests run src/main.ts:
 *
 *   node -r ts-node/register/transpile-only test/e2e/setup/cielo/chaos-launcher.ts
 *
 * It makes a fresh test CA and server certificate, starts the simulator (transactional, query and MPI hosts,
 * the sandbox's card-ending outcomes, every request judged by cielo-ecommerce-3.0.schemas.json) and prints one
 * JSON line on stdout once it listens:
 *   {"controlUrl", "env"}   env: the CIELO_* variables pointing the gateway here (CieloSimulator.gatewayEnv)
 *
 * With CHAOS_CIELO_FAULTS=true it plays, now and then (about every CHAOS_CIELO_FAULT_EVERY_SALES POST /1/sales),
 * one fault on the next POST /1/sales:
 * - answer lost: the payment is made, then the connection is cut before the answer;
 * - timeout: the payment is made at once, its answer written CHAOS_CIELO_HOLD_MS later (past the client's timeout);
 * - late: the request waits CHAOS_CIELO_DELAY_MS before it is handled (past the client's timeout, well within
 *   the gateway's CIELO_NOT_FOUND_AFTER_SECONDS): the payment is made after the client gave up;
 * - 5xx: 500, 502 or 503 before anything is made;
 * - pending: the sale is answered `Status` 12 (the institution has not answered), and settled CHAOS_CIELO_PENDING_MS
 *   later, approved (captured) or, one time in three, denied; not notified (the gateway takes no notification yet):
 *   the janitor's look-up finds it.
 * Look-ups (GET on the query host) are never faulted here: the janitor's own retries are the e2e tests' part.
 *
 * With CHAOS_CIELO_LATENCY_MS (0) every POST /1/sales waits that long before it is handled, faults or not: a
 * real acquirer's answer time (`npm run bench:acquirer` runs it at 800 ms with faults off).
 *
 * Its control endpoint (plain HTTP on loopback, controlUrl):
 *   GET /state   the payments (paymentId, merchantOrderId, type, amount, status, capturedAmount, voidedAmount,
 *                installments, brand, returnCode), the POST /1/sales per MerchantOrderId and those answered
 *                201, the look-ups by MerchantOrderId, the faults played, the schema violations seen
 *   POST /pay-boleto {merchantOrderId, delivery?: once|never}   the open boleto under that MerchantOrderId paid
 *                (Status 2), notified to CHAOS_CIELO_NOTIFICATION_URL once or never; 409 when there is none
 *
 * Environment: CHAOS_CIELO_MERCHANT_ID (a GUID), CHAOS_CIELO_MERCHANT_KEY (required); CHAOS_CIELO_FAULTS [true];
 * CHAOS_CIELO_FAULT_EVERY_SALES (mean) [8]; CHAOS_CIELO_HOLD_MS [4000]; CHAOS_CIELO_DELAY_MS [3000];
 * CHAOS_CIELO_PENDING_MS [4000]; CHAOS_CIELO_LATENCY_MS [0]; CHAOS_CIELO_NOTIFICATION_URL (the service's notification
 * URL, where boletos' payments are notified).
 * SIGTERM or SIGINT: closes the simulator, removes the certificates, exits 0.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { makeCertificates } from '../api-pix/certificates';
import { CieloSimulator } from './simulator';

const env = process.env;
/** POST /1/sales only: look-ups and other calls pass untouched. */
const SALE_POST = { path: /^\/1\/sales\/?$/, method: 'POST' };

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const faultsOn = (env.CHAOS_CIELO_FAULTS ?? 'true') === 'true';
  const faultEvery = Number(env.CHAOS_CIELO_FAULT_EVERY_SALES ?? 8);
  const holdMs = Number(env.CHAOS_CIELO_HOLD_MS ?? 4000);
  const delayMs = Number(env.CHAOS_CIELO_DELAY_MS ?? 3000);
  const pendingMs = Number(env.CHAOS_CIELO_PENDING_MS ?? 4000);
  const latencyMs = Number(env.CHAOS_CIELO_LATENCY_MS ?? 0);
  if (!Number.isInteger(latencyMs) || latencyMs < 0) throw new Error('CHAOS_CIELO_LATENCY_MS must be a whole number of milliseconds, 0 or more');

  const certs = await makeCertificates();
  const cielo = await CieloSimulator.start({
    certs,
    merchantId: required('CHAOS_CIELO_MERCHANT_ID'),
    merchantKey: required('CHAOS_CIELO_MERCHANT_KEY'),
    mpi: { clientId: 'gateway-chaos-mpi', clientSecret: randomBytes(16).toString('hex') },
    saleLatencyMs: latencyMs,
    // Boletos (CHAOS_BOLETOS=cielo): paid by the control endpoint, notified here when the service listens.
    ...(env.CHAOS_CIELO_NOTIFICATION_URL ? { notificationUrl: env.CHAOS_CIELO_NOTIFICATION_URL } : {}),
  });

  const faults = { answersLost: 0, timeouts: 0, late: 0, sales5xx: 0, pending: 0, pendingApproved: 0, pendingDenied: 0 };
  let postsSeen = 0;
  let nextFaultAt = 1 + Math.floor(Math.random() * faultEvery * 2);
  const tick = setInterval(() => {
    // Pending sales get their answer once they waited pendingMs.
    for (const payment of cielo.payments()) {
      if (payment.status !== 12 || Date.now() - payment.receivedAt.getTime() < pendingMs) continue;
      const approved = Math.random() < 2 / 3;
      faults[approved ? 'pendingApproved' : 'pendingDenied'] += 1;
      void cielo.settle(payment.paymentId, approved ? 'approved' : 'denied', { delivery: 'never' }).catch(() => undefined);
    }
    if (!faultsOn) return;
    const posts = cielo.requestsOf('sale').length;
    if (posts < postsSeen + nextFaultAt) return;
    postsSeen = posts;
    nextFaultAt = 1 + Math.floor(Math.random() * faultEvery * 2);
    const roll = Math.random();
    if (roll < 0.25) {
      cielo.dropAnswerNext(1, SALE_POST);
      faults.answersLost += 1;
    } else if (roll < 0.45) {
      cielo.holdAnswerNext(1, holdMs, SALE_POST);
      faults.timeouts += 1;
    } else if (roll < 0.6) {
      cielo.delayNext(1, delayMs, SALE_POST);
      faults.late += 1;
    } else if (roll < 0.8) {
      cielo.pendingNext(1);
      faults.pending += 1;
    } else {
      cielo.failNext(1, { ...SALE_POST, status: [500, 502, 503][Math.floor(Math.random() * 3)] });
      faults.sales5xx += 1;
    }
  }, 50);

  const state = () => {
    const posts: Record<string, number> = {};
    const answered: Record<string, number> = {};
    for (const request of cielo.requestsOf('sale')) {
      const order = request.merchantOrderId ?? '';
      posts[order] = (posts[order] ?? 0) + 1;
      if (request.status === 201) answered[order] = (answered[order] ?? 0) + 1;
    }
    return {
      payments: cielo.payments().map((p) => ({
        paymentId: p.paymentId,
        merchantOrderId: p.merchantOrderId,
        type: p.type,
        amount: p.amount,
        status: p.status,
        capturedAmount: p.capturedAmount ?? null,
        voidedAmount: p.voidedAmount,
        installments: p.installments ?? null,
        brand: p.brand ?? null,
        returnCode: p.returnCode ?? null,
      })),
      postsByOrderId: posts,
      answeredByOrderId: answered,
      lookupsByOrderId: cielo.requestsOf('get-by-order').length,
      lookupsByPaymentId: cielo.requestsOf('get-sale').length,
      faults,
      violations: cielo.violations.length,
      firstViolations: cielo.violations.slice(0, 10),
    };
  };

  /** The open boleto issued under a MerchantOrderId paid, then notified (or not: `delivery` never, the poll's to find). */
  const payBoleto = async (merchantOrderId: string, delivery: 'once' | 'never'): Promise<[number, unknown]> => {
    const boleto = cielo.payments(merchantOrderId).find((payment) => payment.type === 'Boleto' && payment.status === 1);
    if (!boleto) return [409, { error: `no open boleto under ${merchantOrderId}` }];
    await cielo.payBoleto(boleto.paymentId, { delivery }).catch(() => undefined);
    return [200, { paymentId: boleto.paymentId }];
  };

  const control = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.method === 'GET' && request.url === '/state') return answer(200, state());
      if (request.method === 'POST' && request.url === '/pay-boleto') {
        let body: { merchantOrderId?: string; delivery?: 'once' | 'never' } = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        } catch {
          return answer(400, { error: 'a JSON body {merchantOrderId, delivery?}' });
        }
        if (!body.merchantOrderId) return answer(400, { error: 'merchantOrderId is required' });
        return void payBoleto(body.merchantOrderId, body.delivery === 'never' ? 'never' : 'once').then(([status, result]) => answer(status, result));
      }
      answer(404, { error: `${request.method} ${request.url} is not a control of this launcher` });
    });
  });
  control.listen(0, '127.0.0.1');
  await once(control, 'listening');

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    clearInterval(tick);
    control.closeAllConnections();
    control.close();
    await Promise.race([cielo.close(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    rmSync(certs.dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void close());
  process.on('SIGINT', () => void close());

  process.stdout.write(`${JSON.stringify({ controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`, env: cielo.gatewayEnv() })}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`cielo chaos-launcher: ${error.stack ?? error.message}\n`);
  process.exit(2);
});
