'use strict';
/**
 * `npm run chaos` (issue 20): the production build (dist/src/main.js) against real PostgreSQL and Redis,
 * on a database of its own, under a mixed load — card sales (good, refused and failing test cards), PIX
 * sales later confirmed, refunds, chargebacks, MEDs, cashouts moved through the payout provider's
 * sandbox events, card subscriptions renewed through the sandbox scheduler at a `now` in the future —
 * while the service is SIGKILLed and started again on a timer, and its PostgreSQL backends are now and
 * then terminated (pg_terminate_backend). Clients see errors while the service is down: they are
 * counted, never fatal. Card sales are sent with an Idempotency-Key and retried with it, as a client
 * would.
 *
 * After the load the service is started once more and left to recover (PROVIDER_RECOVERY_AFTER_SECONDS
 * is short), the scheduler route is called for every seller, the outbox is waited on until nothing is
 * PENDING, and then it checks, and prints as figures:
 *   - ledger:verify on the chaos database exits 0 (its lines are printed);
 *   - sales by status, none left EM_PROCESSAMENTO nor owing a refund; withdrawals by status, none unsent;
 *   - the sandbox acquirer: at most one charge per reference, none without a sale, an approved charge
 *     for every paid card sale and none for a refused or failed one; the sandbox payout provider: at
 *     most one payout per withdrawal, none without one, one for every completed withdrawal;
 *   - every sale status change (sale_status_changes) of a sale with a postbackUrl has its postback in
 *     the outbox, and every withdrawal status change announced by webhook has its webhook event;
 *   - every outbox event DELIVERED and received by the local receiver at least once (postbacks by
 *     X-Event-Id; unsigned withdrawal webhooks, which carry none, by withdrawal id and status).
 * Exits 1 if any check fails (2 if the run itself could not be made). Drops the database at the end.
 *
 * Env (defaults in brackets):
 *   CHAOS_KILLS               SIGKILLs of the service during the load [20]
 *   CHAOS_KILL_EVERY_MS       mean time between two kills, counted from the restart (±50 %) [5000]
 *   CHAOS_PG_TERMINATE_EVERY_MS  mean time between two rounds of pg_terminate_backend on the service's
 *                             connections (0: never) [4000]
 *   CHAOS_TAIL_MS             load kept up after the last restart [3000]
 *   CHAOS_CONCURRENCY         concurrent clients [8]
 *   CHAOS_SELLERS             sellers, each with a withdrawal webhook [4]
 *   CHAOS_RECOVERY_TIMEOUT_MS how long to wait for the outbox to drain and the sales to settle after the load;
 *                             at least the recovery lease's minute plus the recovery delay, since a sale a killed
 *                             life had leased waits out its lease [120000]
 *   CHAOS_KEEP_DATABASE       true: keep the database (its name is printed) [false]
 *   CHAOS_SERVICE_LOG         a file the service's output is appended to (every life of it) [none]
 *   CHAOS_SERVICE             dist: the production build (built first if dist/ is missing); ts-node: src/main.ts
 *                             through ts-node, as the e2e process tests start it (what the CI's short run uses) [dist]
 *   CHAOS_PAYOUTS             sandbox: PIX and payouts through the sandbox, as above; efi: see below [sandbox]
 *   CHAOS_EFI_SETTLE_AFTER_MS, CHAOS_EFI_REJECT_RATE, CHAOS_EFI_FAULTS, CHAOS_EFI_FAULT_EVERY_SENDS: passed to the
 *                             simulator's launcher in efi mode (test/e2e/setup/api-pix/chaos-launcher.ts)
 *   CHAOS_CARDS               sandbox: card sales through the sandbox acquirer, as above; cielo: see below; combines
 *                             with CHAOS_PAYOUTS=efi [sandbox]
 *   CHAOS_BOLETOS             sandbox: no boleto load; cielo: boleto sales through Cielo at the same simulator (see below);
 *                             combines with the others [sandbox]
 *   CHAOS_CIELO_FAULTS, CHAOS_CIELO_FAULT_EVERY_SALES, CHAOS_CIELO_HOLD_MS, CHAOS_CIELO_DELAY_MS, CHAOS_CIELO_PENDING_MS:
 *                             passed to the Cielo simulator's launcher in cielo mode (test/e2e/setup/cielo/chaos-launcher.ts)
 *   DATABASE_URL              its server is used; the database is chaos-owned, created and dropped
 *   REDIS_URL                 Redis [redis://127.0.0.1:6379]
 *
 * CHAOS_PAYOUTS=efi (issue 38): PIX received through the BCB's API Pix and withdrawals paid by Efí's Pix send, both
 * played by the API Pix + Efí simulator in a process of its own, which lives through every kill of the service
 * (test/e2e/setup/api-pix/chaos-launcher.ts, run through ts-node; it prints its URLs and certificate files on one
 * JSON line and answers a small control endpoint). The service runs with PIX_PROVIDER=api-pix, PAYOUT_PROVIDER=efi,
 * the API_PIX_* variables pointing at the simulator (its webhook at the service's port under an unguessable segment)
 * and SANDBOX_CLOCK_MOVES_REAL_RECORDS=true (so NODE_ENV=test: production refuses it). In that mode:
 *   - the sellers have a CPF on record and withdraw to the key of that CPF (now and then to a key of someone else's
 *     document, which Efí refuses: FAILED); the sends settle at the simulator by themselves (REALIZADO, a share
 *     NAO_REALIZADO), while the simulator now and then loses a send's answer, answers 503, loses or repeats a callback;
 *   - PIX sales (and the sellers' funding) are paid at the simulator (its control endpoint pays the txid), not through
 *     the sandbox's events route, which refuses a PSP's sale; PIX refunds go through POST /api/sales/{id}/refunds (the
 *     simulator returns them at once); MEDs through POST /admin/sales/{id}/events (MED_OPENED, MED_WON: MED_LOST is
 *     the PSP's own return); chargebacks on card sales, which the sandbox still holds; no PIX subscriptions (Pix
 *     Automático would need the simulator's clock to follow the sandbox's);
 *   - the checks: ledger:verify exits 0 (it checks every COMPLETED withdrawal against the amount Efí's look-up
 *     reported); no withdrawal PENDING or PROCESSING after recovery; at the simulator each idEnvio registered at most
 *     once and none without a withdrawal, every COMPLETED withdrawal has exactly one REALIZADO send of its net amount
 *     (and its E2E id), no REALIZADO send of a withdrawal not COMPLETED, no send left EM_PROCESSAMENTO, every Pix the
 *     PSP received known to the service (pix_receipts; one whose notification was lost while a pass a SIGKILL cut short
 *     holds reconciliation's ten-minute lease is reported as late, not failed), no request or answer off the schemas;
 *     the sandbox payout checks are skipped.
 *
 * CHAOS_CARDS=cielo (issue 39): card sales through Cielo's API E-commerce 3.0, played by the Cielo simulator in a
 * process of its own that lives through every kill of the service (test/e2e/setup/cielo/chaos-launcher.ts, run
 * through ts-node; it prints its control URL and the CIELO_* variables on one JSON line). The service runs with
 * CARD_PROVIDER=cielo, those variables, CIELO_ORDER_ID_PREFIX=GWCHAOS, CIELO_TIMEOUT_MS=2000 and
 * CIELO_NOT_FOUND_AFTER_SECONDS=8 (so a sale whose POST never reached Cielo is FALHA within the recovery), and
 * SANDBOX_CLOCK_MOVES_REAL_RECORDS=true with NODE_ENV=test (the scheduler runs in the future, as in efi mode). In that mode:
 *   - the card load is credit sales on the sandbox's card endings (0, 1, 4 approved; 2, 3, 5, 6, 7, 8 refused; 9 either)
 *     of Visa, Master and Elo in 1 to 12 instalments of at least R$ 5, and debit sales with card.threeDSecure (ECI 05
 *     for Visa and Elo, 02 for Mastercard); the simulator now and then plays a fault on POST /1/sales: the answer lost
 *     after the payment was made, the answer held past the client's timeout, the request handled late (after the
 *     timeout, within CIELO_NOT_FOUND_AFTER_SECONDS), a 5xx before anything was made, a Pending answer (Status 12)
 *     settled a few seconds later, approved or denied, without a notification (the janitor finds it);
 *   - card subscriptions (the first charge saves the card; the scheduler's runs in the future renew them by token, without
 *     CVV) and refunds (a void at Cielo: in full, a third, or a third then the rest, one waiting Cielo's 5 s pause as
 *     PENDING and sent by the janitor, JANITOR_SECONDS=2); chargebacks stay the operator's (Cielo's chargeback API needs
 *     its own onboarding);
 *   - the checks: ledger:verify exits 0 (it checks every PAGO Cielo sale against the amount Cielo reported captured); no
 *     card sale left EM_PROCESSAMENTO; at the simulator at most one POST /1/sales and one payment per MerchantOrderId
 *     (never a double charge), none without a Cielo sale, every PAGO Cielo sale with exactly one captured payment of
 *     its amount whose PaymentId is its externalTransactionId, no approved payment of a sale not PAGO (money taken,
 *     not credited), what Cielo voided of each payment between the sale's COMPLETED refunds and those plus its PENDING
 *     ones (never a void made twice, nor a refund booked that Cielo did not make), no refund of a Cielo sale left
 *     PENDING after recovery, no request or answer off the schemas; the sandbox acquirer checks cover the sandbox's sales only.
 */
/*
 * CHAOS_BOLETOS=cielo (issue 40): boleto sales through Cielo (BOLETO_PROVIDER=cielo, CIELO_BOLETO_PROVIDER=Simulado,
 * CIELO_BOLETO_CLEARING_DAYS=1, CIELO_BOLETO_POLL_SECONDS=2, CIELO_NOTIFICATION_URL the service's) at the Cielo
 * simulator, whose faults on POST /1/sales hit their issuance too (an answer lost is found by MerchantOrderId; one
 * handled too late for that look-up leaves a boleto nobody was shown). About two in three are paid at the simulator
 * at once (its control endpoint), notified or not (the poll's to find, every 2 s a boleto); of the others some are
 * paid later, after the scheduler's runs in the future may have cancelled them (late: owed back to the payer). The sellers are funded by sandbox PIX (the
 * transfers the funding used are not taken while Cielo holds the boleto rail). The checks: every boleto Cielo shows
 * paid is its sale's PAGO of its amount, or a late payment booked once on its CANCELADO sale; every PAGO boleto sale
 * is a boleto Cielo shows paid of its amount under its PaymentId; none paid at Cielo left unbooked after recovery
 * (waited for); boletos Cielo registered for no sale are counted (allowed only unpaid: never shown to anyone).
 */
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const env = process.env;
const settings = {
  kills: Number(env.CHAOS_KILLS ?? 20),
  killEveryMs: Number(env.CHAOS_KILL_EVERY_MS ?? 5000),
  pgTerminateEveryMs: Number(env.CHAOS_PG_TERMINATE_EVERY_MS ?? 4000),
  tailMs: Number(env.CHAOS_TAIL_MS ?? 3000),
  concurrency: Number(env.CHAOS_CONCURRENCY ?? 8),
  sellers: Number(env.CHAOS_SELLERS ?? 4),
  recoveryTimeoutMs: Number(env.CHAOS_RECOVERY_TIMEOUT_MS ?? 120_000),
  keepDatabase: env.CHAOS_KEEP_DATABASE === 'true',
  serviceLog: env.CHAOS_SERVICE_LOG ? path.resolve(env.CHAOS_SERVICE_LOG) : null,
  fromSource: env.CHAOS_SERVICE === 'ts-node',
  payouts: env.CHAOS_PAYOUTS || 'sandbox',
  cards: env.CHAOS_CARDS || 'sandbox',
  boletos: env.CHAOS_BOLETOS || 'sandbox',
};
const efi = settings.payouts === 'efi';
const cielo = settings.cards === 'cielo';
/** CHAOS_BOLETOS=cielo: boletos registered through Cielo (BOLETO_PROVIDER=cielo) at the same simulator. */
const cieloBoletos = settings.boletos === 'cielo';
/** Cielo's MerchantOrderId is this and the sale's id. */
const CIELO_ORDER_ID_PREFIX = 'GWCHAOS';
const EFI_SEND_ID_PREFIX = 'GWCHAOS';
/** Someone else's key: Efí refuses a send to it naming the seller's CPF (chave_nao_pertence_ao_documento). */
const SOMEONE_ELSES_KEY = 'outra.pessoa@example.com';
/** Node's arguments to run one of the service's entry points (`database/prepare-database`, `main`…), built or from source. */
const entry = (name) => (settings.fromSource ? ['-r', 'ts-node/register/transpile-only', path.join(root, 'src', `${name}.ts`)] : [path.join(root, 'dist', 'src', `${name}.js`)]);
const ADMIN_TOKEN = `chaos-admin-${crypto.randomBytes(12).toString('hex')}`;
const RECOVERY_AFTER_SECONDS = 5;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const jitter = (ms) => Math.round(ms * (0.5 + Math.random()));

const GOOD_CARDS = ['4111111111111111', '5555555555554444', '6362970000457013'];
const REFUSED_CARD = '4000000000000002';
const FAILING_CARD = '4000000000000119';
const PAID_THEN_REFUSED_CARD = '4000000000000341';
const customer = { name: 'Ana Souza', email: 'ana@example.com', document: { type: 'cpf', number: '52998224725' }, phone: '11987654321' };
const card = (number) => ({ number, holderName: 'ANA SOUZA', expirationMonth: '12', expirationYear: '2035', cvv: '123' });
/** A Luhn-valid card of Cielo's sandbox (its outcome is its last digit, ref §3.2) of `brand`, the middle digits random. */
const CIELO_BRAND_PREFIX = { Visa: '4024007', Master: '5448280', Elo: '6362970' };
function cieloCard(lastDigit, brand) {
  const middle = Array.from({ length: 7 }, () => Math.floor(Math.random() * 10)).join('');
  for (let adjust = 0; adjust < 10; adjust += 1) {
    const number = `${CIELO_BRAND_PREFIX[brand]}${middle}${adjust}${lastDigit}`;
    let sum = 0;
    for (let i = 0; i < number.length; i += 1) {
      let digit = Number(number[number.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    if (sum % 10 === 0) return number;
  }
  throw new Error(`no Luhn-valid card ends in ${lastDigit}`);
}
/** Debit's 3-D Secure result as the BP.Mpi script gives it for an authenticated cardholder: ECI 02 for Mastercard, 05 for Visa and Elo. */
const threeDSecure = (number) => ({ cavv: 'AAABB2gHA1B5EFNjWQcDAAAAAAA=', eci: number.startsWith('5') ? '02' : '05', version: '2', referenceId: 'a24a5d87-b1a1-4aef-a37b-2f30b91274e6' });

// ---------- figures ----------

const counts = {};
const count = (key, n = 1) => {
  counts[key] = (counts[key] ?? 0) + n;
};

// ---------- the receiver of postbacks and webhooks ----------

/** Answers 200 to everything; records postbacks by X-Event-Id and webhooks by withdrawal id and status. */
async function startReceiver() {
  const eventIds = new Map(); // X-Event-Id -> times received
  const webhooks = new Map(); // `${withdrawalId}:${status}` -> times received
  let requests = 0;
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      requests += 1;
      const eventId = request.headers['x-event-id'];
      if (eventId) eventIds.set(eventId, (eventIds.get(eventId) ?? 0) + 1);
      else {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          const key = `${body.id}:${body.status}`;
          webhooks.set(key, (webhooks.get(key) ?? 0) + 1);
        } catch {
          // not a webhook body; counted in requests only
        }
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    eventIds,
    webhooks,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

// ---------- the service process ----------

async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function serviceController(port, serviceEnv) {
  let child = null;
  let lives = 0;
  const start = async () => {
    lives += 1;
    const life = lives;
    const inherited = { ...env };
    delete inherited.LOG_LEVEL;
    child = spawn(process.execPath, entry('main'), { cwd: root, env: { ...inherited, ...serviceEnv, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk) => {
      tail = (tail + chunk).slice(-4000);
      if (settings.serviceLog) fs.appendFileSync(settings.serviceLog, chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    if (settings.serviceLog) fs.appendFileSync(settings.serviceLog, `\n--- chaos: service life ${life}, pid ${child.pid} ---\n`);
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited at start (life ${life}): ${tail}`);
      if (Date.now() - started > 60_000) throw new Error(`the service did not answer /health/live within 60 s (life ${life}): ${tail}`);
      const live = await fetch(`http://127.0.0.1:${port}/health/live`).then((r) => r.ok, () => false);
      if (live) break;
      await sleep(100);
    }
    return Date.now() - started;
  };
  const signal = async (name, timeoutMs) => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill(name);
    if (timeoutMs) {
      const timer = setTimeout(() => current.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    } else await exited;
  };
  return { start, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM', 20_000), lives: () => lives };
}

// ---------- the API Pix + Efí simulator (CHAOS_PAYOUTS=efi) ----------

/** A valid CPF (its two check digits computed), random. */
function randomCpf() {
  const digits = Array.from({ length: 9 }, () => Math.floor(Math.random() * 10));
  if (digits.every((d) => d === digits[0])) digits[0] = (digits[0] + 1) % 10;
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((total, d, i) => total + d * (length + 1 - i), 0);
    digits.push(((sum * 10) % 11) % 10);
  }
  return digits.join('');
}

/**
 * Starts a simulator's chaos launcher (test/e2e/setup/<simulator>/chaos-launcher.ts: api-pix or cielo) through
 * ts-node and reads its JSON line (URLs, certificate files, variables); `state()` and `pay(txid)` talk to its control
 * endpoint; `stop()` ends it (SIGTERM, then SIGKILL).
 */
async function startLauncher(simulator, launcherEnv) {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(root, 'test', 'e2e', 'setup', simulator, 'chaos-launcher.ts')], {
    cwd: root,
    env: { ...env, ...launcherEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Whatever ends this process ends the simulator too (a normal run stops it first, removing its certificates).
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
    if (settings.serviceLog) fs.appendFileSync(settings.serviceLog, `[${simulator} simulator] ${chunk}`);
  });
  const info = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the simulator's launcher printed nothing within 60 s: ${stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.slice(0, newline)));
      } catch {
        reject(new Error(`the simulator's launcher printed no JSON: ${stdout.slice(0, newline)}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the simulator's launcher exited ${code}: ${stderr}`));
    });
  });
  child.stdout.resume();
  const control = async (method, route, body) => {
    const response = await fetch(`${info.controlUrl}${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    ...info,
    state: async () => {
      const answer = await control('GET', '/state');
      if (answer.status !== 200) throw new Error(`the simulator's state: ${answer.status}`);
      return answer.body;
    },
    pay: (txid) => control('POST', '/pay', { txid }).catch(() => ({ status: 'network', body: null })),
    payBoleto: (merchantOrderId, delivery) => control('POST', '/pay-boleto', { merchantOrderId, delivery }).catch(() => ({ status: 'network', body: null })),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------- HTTP client that never throws ----------

function classify(status) {
  return status === 'network' ? 'network (connection refused or reset)' : String(status);
}

async function call(base, method, route, body, headers = {}) {
  try {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: response.status, body: json };
  } catch {
    return { status: 'network', body: null };
  }
}

/**
 * A client's call under chaos: counted by outcome; network errors and 5xx are retried (with the same
 * Idempotency-Key where given: a retried sale or cashout must never be made twice).
 */
async function clientCall(state, label, method, route, body, headers, retries = 3) {
  for (let attempt = 0; ; attempt += 1) {
    const result = await call(state.base, method, route, body, headers);
    count('requests');
    if (typeof result.status === 'number' && result.status < 400) {
      count('requests answered 2xx');
      return result;
    }
    count(`client errors: ${classify(result.status)}`);
    if (result.status === 500) count(`client errors: 500 on ${label}`);
    const retryable = result.status === 'network' || (headers['Idempotency-Key'] !== undefined ? result.status >= 500 : result.status === 503);
    if (!retryable || attempt >= retries || state.stopping) return result;
    count('retries');
    await sleep(300 + Math.random() * 700);
  }
}

// ---------- the load ----------

function saleBody(method, overrides = {}) {
  const amount = 1000 + Math.floor(Math.random() * 40) * 250;
  const body = { amount, paymentMethod: method, customer, items: [{ title: 'Curso online', unitPrice: amount, quantity: 1, tangible: false }], ...overrides };
  if (method === 'PIX') body.pix = {};
  return body;
}

async function createSale(state, seller, body, label) {
  const key = crypto.randomUUID();
  const headers = { ...seller.keys, 'Idempotency-Key': key };
  // The key in the metadata too: the checks count the sales made under one key (one at most).
  const result = await clientCall(state, label, 'POST', '/api/sales', { ...body, metadata: { chaosKey: key }, postbackUrl: `${state.receiverUrl}/postbacks/${seller.id}` }, headers);
  if (result.status !== 201) return null;
  count(`created: ${label}`);
  return result.body.sale;
}

async function saleEvent(state, seller, saleId, event) {
  const result = await clientCall(state, event, 'POST', `/api/sandbox/sales/${saleId}/events`, { event }, seller.keys);
  if (result.status === 200) count(`sale events: ${event}`);
  else if (result.status === 409) count('sale events refused 409 (the sale was not in a state for it)');
  return result.status === 200;
}

const SCENARIOS = [
  // [weight, name, run]
  [5, 'card sale, good card', async (state, seller) => {
    const sale = await createSale(state, seller, saleBody('CREDIT_CARD', { card: card(pick(GOOD_CARDS)), installments: { number: 1 + Math.floor(Math.random() * 3) } }), 'card sale (good card)');
    if (!sale) return;
    const roll = Math.random();
    if (roll < 0.2) await saleEvent(state, seller, sale.id, 'REFUNDED');
    else if (roll < 0.4) {
      if (await saleEvent(state, seller, sale.id, 'CHARGEBACK_OPENED')) await saleEvent(state, seller, sale.id, pick(['CHARGEBACK_CONFIRMED', 'CHARGEBACK_REVERSED']));
    }
  }],
  [1, 'card sale, refused card', (state, seller) => createSale(state, seller, saleBody('CREDIT_CARD', { card: card(REFUSED_CARD) }), 'card sale (refused card)')],
  [1, 'card sale, failing card', (state, seller) => createSale(state, seller, saleBody('CREDIT_CARD', { card: card(FAILING_CARD) }), 'card sale (failing card)')],
  [1, 'debit card sale', (state, seller) => createSale(state, seller, saleBody('DEBIT_CARD', { card: ((number) => ({ ...card(number), threeDSecure: threeDSecure(number) }))(pick(GOOD_CARDS)) }), 'debit card sale')],
  [4, 'PIX sale', async (state, seller) => {
    const sale = await createSale(state, seller, saleBody('PIX'), 'PIX sale');
    if (!sale || Math.random() < 0.15) return; // some stay PENDENTE: legitimately pending
    if (!(await saleEvent(state, seller, sale.id, 'PAYMENT_CONFIRMED'))) return;
    const roll = Math.random();
    if (roll < 0.2) await saleEvent(state, seller, sale.id, 'REFUNDED');
    else if (roll < 0.5) {
      if (await saleEvent(state, seller, sale.id, 'MED_OPENED')) await saleEvent(state, seller, sale.id, pick(['MED_WON', 'MED_LOST']));
    }
  }],
  [2, 'cashout', async (state, seller) => {
    const result = await clientCall(state, 'cashout', 'POST', '/api/public/cashout', { amount: 100 + Math.floor(Math.random() * 200), pixKey: '52998224725', pixKeyType: 'CPF' }, { ...seller.keys, 'Idempotency-Key': crypto.randomUUID() });
    if (result.status !== 201) return;
    count('created: withdrawal');
    const id = result.body.id;
    const roll = Math.random();
    const steps = roll < 0.5 ? ['PROCESSING', 'COMPLETED'] : roll < 0.65 ? ['PROCESSING', 'REJECTED'] : roll < 0.75 ? ['REJECTED'] : roll < 0.85 ? ['CANCELLED'] : [];
    for (const event of steps) {
      const moved = await clientCall(state, `cashout ${event}`, 'POST', `/api/sandbox/cashouts/${id}/events`, { event }, seller.keys);
      if (moved.status !== 200) {
        if (moved.status === 409) count('cashout events refused 409');
        return;
      }
      count(`cashout events: ${event}`);
    }
  }],
  [1, 'card subscription', (state, seller) =>
    createSale(state, seller, saleBody('CREDIT_CARD', { card: card(Math.random() < 0.7 ? pick(GOOD_CARDS) : PAID_THEN_REFUSED_CARD), subscription: { enabled: true, billingCycle: pick(['WEEKLY', 'MONTHLY']) } }), 'card subscription')],
  [1, 'PIX subscription', async (state, seller) => {
    const sale = await createSale(state, seller, saleBody('PIX', { subscription: { enabled: true, billingCycle: 'WEEKLY' } }), 'PIX subscription');
    if (sale && Math.random() < 0.8) await saleEvent(state, seller, sale.id, 'PAYMENT_CONFIRMED');
  }],
  [1, 'scheduler run in the future', async (state, seller) => {
    // Each run a week further: renewals, dunning retries, reserve releases.
    seller.schedulerDays += 7;
    const now = new Date(state.startedAt + seller.schedulerDays * 86_400_000).toISOString();
    const result = await clientCall(state, 'scheduler', 'POST', '/api/sandbox/scheduler/run', { now }, seller.keys, 0);
    if (result.status === 200) {
      count('scheduler runs');
      const s = result.body.subscriptions ?? {};
      count('scheduler: renewals', s.renewals ?? 0);
      count('scheduler: retries', s.retries ?? 0);
      count('scheduler: released reserves', result.body.releasedReserves ?? 0);
    }
  }],
];

// ---------- the load's efi mode (CHAOS_PAYOUTS=efi): PIX and payouts at the simulator ----------

/** A PIX sale's txid at the PSP: from the creation's answer, else its lookup; null when it has none. */
async function pixTxid(state, seller, sale) {
  if (sale.externalTransactionId) return sale.externalTransactionId;
  const found = await clientCall(state, 'transaction lookup', 'GET', `/api/transactions/${sale.id}`, undefined, seller.keys);
  return found.status === 200 ? (found.body?.externalTransactionId ?? null) : null;
}

/**
 * The payer pays the sale's charge at the simulator (its webhook tells the service); true once the service
 * holds the sale PAGO, within a few seconds (a notification that met a killed service is left to reconciliation).
 */
async function payAtPsp(state, seller, sale) {
  const txid = await pixTxid(state, seller, sale);
  if (!txid) {
    count('PIX sales without a charge at the PSP');
    return false;
  }
  const paid = await state.launcher.pay(txid);
  if (paid.status !== 200) {
    count(`PIX payments the PSP would not make (${paid.status})`);
    return false;
  }
  count('PIX payments at the PSP');
  for (let i = 0; i < 30 && !state.stopping; i += 1) {
    const found = await call(state.base, 'GET', `/api/transactions/${sale.id}`, undefined, seller.keys);
    if (found.status === 200 && found.body?.status === 'PAGO') return true;
    await sleep(200);
  }
  count('PIX payments not seen PAGO within 6 s (left to reconciliation)');
  return false;
}

/** A dispute the operator records (POST /admin/sales/{id}/events), as reported by the PSP or the acquirer. */
async function operatorEvent(state, saleId, event) {
  const result = await clientCall(state, event, 'POST', `/admin/sales/${saleId}/events`, { event, reason: 'chaos: reported out of band' }, { 'x-admin-token': ADMIN_TOKEN });
  if (result.status === 200) count(`sale events (operator): ${event}`);
  else if (result.status === 409) count('sale events refused 409 (the sale was not in a state for it)');
  return result.status === 200;
}

/** The scenarios of card sales (the sandbox acquirer's), and the others. */
const isCardScenario = (name) => name.startsWith('card') || name === 'debit card sale';
const SANDBOX_CARD_SCENARIOS = SCENARIOS.filter(([, name]) => isCardScenario(name));

const EFI_SCENARIOS = [
  // [weight, name, run]; the card scenarios are added by CHAOS_CARDS.
  ...SCENARIOS.filter(([, name]) => name === 'scheduler run in the future'),
  [4, 'PIX sale', async (state, seller) => {
    const sale = await createSale(state, seller, saleBody('PIX'), 'PIX sale');
    if (!sale || Math.random() < 0.15) return; // some stay PENDENTE: legitimately pending
    if (!(await payAtPsp(state, seller, sale))) return;
    const roll = Math.random();
    if (roll < 0.2) {
      const refund = await clientCall(state, 'PIX refund', 'POST', `/api/sales/${sale.id}/refunds`, {}, { ...seller.keys, 'Idempotency-Key': crypto.randomUUID() });
      if (refund.status === 201) count('PIX refunds requested');
    } else if (roll < 0.4) {
      if (await operatorEvent(state, sale.id, 'MED_OPENED')) await operatorEvent(state, sale.id, 'MED_WON');
    }
  }],
  [2, 'cashout', async (state, seller) => {
    const elsewhere = Math.random() < 0.05;
    const amount = 100 + Math.floor(Math.random() * 200);
    const body = elsewhere ? { amount, pixKey: SOMEONE_ELSES_KEY, pixKeyType: 'EMAIL' } : { amount, pixKey: seller.cpf, pixKeyType: 'CPF' };
    const result = await clientCall(state, 'cashout', 'POST', '/api/public/cashout', body, { ...seller.keys, 'Idempotency-Key': crypto.randomUUID() });
    if (result.status === 201) count(elsewhere ? "created: withdrawal (to a key of someone else's document)" : 'created: withdrawal');
  }],
];

// ---------- the load's cielo mode (CHAOS_CARDS=cielo): card sales at the Cielo simulator ----------

const CIELO_BRANDS = ['Visa', 'Master', 'Elo'];

/** A Cielo sale: counted by the status the client was answered (EM_PROCESSAMENTO when Cielo's answer did not come). */
async function cieloSale(state, seller, body, label) {
  const sale = await createSale(state, seller, body, label);
  if (sale) count(`Cielo sales answered ${sale.status}`);
  return sale;
}

/** Credit in 1 to 12 instalments, none below Cielo's R$ 5 minimum (the simulator refuses one: Code 186). */
function cieloCredit(lastDigit) {
  const body = saleBody('CREDIT_CARD');
  const most = Math.min(12, Math.floor(body.amount / 500));
  const installments = Math.random() < 0.4 ? 1 : 1 + Math.floor(Math.random() * most);
  return { ...body, card: card(cieloCard(lastDigit, pick(CIELO_BRANDS))), installments: { number: installments } };
}

/** A refund of a Cielo sale (a void at Cielo): counted by the status it was answered (PENDING while Cielo's pause between voids holds it). */
async function cieloRefund(state, seller, saleId, amount) {
  const result = await clientCall(state, 'Cielo refund', 'POST', `/api/sales/${saleId}/refunds`, amount === undefined ? {} : { amount }, { ...seller.keys, 'Idempotency-Key': crypto.randomUUID() });
  if (result.status === 201) count(`Cielo refunds answered ${result.body.status}`);
  else count(`Cielo refunds refused ${result.status}`);
  return result.status === 201 ? result.body : null;
}

/**
 * Card subscriptions (the first charge saves the card; renewals, which the scheduler runs in the future, are charged
 * by its token) and refunds (partial, full, or a partial then the rest) go through Cielo too; chargebacks stay the
 * operator's (Cielo's chargeback API needs its own onboarding).
 */
const CIELO_CARD_SCENARIOS = [
  [5, 'Cielo credit sale, approved card ending', (state, seller) => cieloSale(state, seller, cieloCredit(pick([0, 1, 4])), 'Cielo credit sale (approved ending)')],
  [2, 'Cielo credit sale, refused card ending', (state, seller) => cieloSale(state, seller, cieloCredit(pick([2, 3, 5, 6, 7, 8])), 'Cielo credit sale (refused ending)')],
  [1, 'Cielo credit sale, card ending 9', (state, seller) => cieloSale(state, seller, cieloCredit(9), 'Cielo credit sale (ending 9: either)')],
  [2, 'Cielo debit sale', (state, seller) => {
    const number = cieloCard(pick([0, 1, 4]), pick(CIELO_BRANDS));
    return cieloSale(state, seller, saleBody('DEBIT_CARD', { card: { ...card(number), threeDSecure: threeDSecure(number) } }), 'Cielo debit sale (3-D Secure)');
  }],
  [2, 'Cielo card subscription', (state, seller) =>
    cieloSale(state, seller, saleBody('CREDIT_CARD', { card: card(cieloCard(pick([0, 0, 1, 4, 2]), pick(CIELO_BRANDS))), subscription: { enabled: true, billingCycle: pick(['WEEKLY', 'MONTHLY']) } }), 'Cielo card subscription')],
  [2, 'Cielo refund', async (state, seller) => {
    const sale = await cieloSale(state, seller, cieloCredit(pick([0, 1, 4])), 'Cielo credit sale (to refund)');
    if (!sale || sale.status !== 'PAGO') return;
    const amount = Number(sale.amount);
    const roll = Math.random();
    if (roll < 0.4) await cieloRefund(state, seller, sale.id);
    else if ((await cieloRefund(state, seller, sale.id, Math.max(1, Math.floor(amount / 3)))) && roll < 0.7) await cieloRefund(state, seller, sale.id);
  }],
];

/** The payer's address a boleto is registered to (customer.address, needed under BOLETO_PROVIDER=cielo). */
const BOLETO_ADDRESS = { street: 'Avenida Paulista', streetNumber: '1000', zipCode: '01310100', neighborhood: 'Bela Vista', city: 'São Paulo', state: 'SP' };

/** CHAOS_BOLETOS=cielo: boleto sales through Cielo, three in four paid at the simulator, notified or left to the poll. */
const CIELO_BOLETO_SCENARIOS = [
  [3, 'Cielo boleto sale', async (state, seller) => {
    const body = saleBody('BOLETO', { boleto: { expiresInDays: pick([1, 2, 3]) }, customer: { ...customer, address: BOLETO_ADDRESS } });
    const sale = await createSale(state, seller, body, 'Cielo boleto sale');
    if (!sale) return;
    if (Math.random() < 0.35) {
      // Left unpaid for now: some are paid later, after the scheduler's runs ahead may have cancelled them.
      (state.unpaidBoletos ??= []).push(`${CIELO_ORDER_ID_PREFIX}${sale.id}`);
      return;
    }
    const delivery = Math.random() < 0.3 ? 'never' : 'once';
    const paid = await state.cieloLauncher.payBoleto(`${CIELO_ORDER_ID_PREFIX}${sale.id}`, delivery);
    count(paid.status === 200 ? `Cielo boletos paid (notification ${delivery === 'never' ? 'lost' : 'sent'})` : `Cielo boletos not paid (${paid.status})`);
  }],
  [1, 'Cielo boleto paid late', async (state) => {
    const waiting = state.unpaidBoletos ?? [];
    if (waiting.length < 4) return;
    const [merchantOrderId] = waiting.splice(Math.floor(Math.random() * waiting.length), 1);
    const paid = await state.cieloLauncher.payBoleto(merchantOrderId, Math.random() < 0.5 ? 'never' : 'once');
    count(paid.status === 200 ? 'Cielo boletos paid late' : `Cielo boletos not paid late (${paid.status})`);
  }],
];

const LOAD = [
  ...(cielo ? CIELO_CARD_SCENARIOS : SANDBOX_CARD_SCENARIOS),
  ...(efi ? EFI_SCENARIOS : SCENARIOS.filter(([, name]) => !isCardScenario(name))),
  ...(cieloBoletos ? CIELO_BOLETO_SCENARIOS : []),
];
const TOTAL_WEIGHT = LOAD.reduce((sum, [weight]) => sum + weight, 0);

function pickScenario() {
  let roll = Math.random() * TOTAL_WEIGHT;
  for (const scenario of LOAD) {
    roll -= scenario[0];
    if (roll < 0) return scenario;
  }
  return LOAD[0];
}

async function worker(state) {
  while (!state.stopping) {
    const [, name, run] = pickScenario();
    try {
      await run(state, pick(state.sellers));
    } catch (error) {
      count(`driver exceptions (${name})`);
      if (!state.firstDriverError) state.firstDriverError = error.stack;
    }
    if (state.down) await sleep(50);
  }
}

// ---------- database ----------

async function pgClient(url) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function terminateBackends(maintenance, databaseName) {
  try {
    const { rows } = await maintenance.query(
      `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [databaseName],
    );
    count('PostgreSQL backends terminated', rows[0].n);
    count('pg_terminate_backend rounds');
  } catch {
    count('pg_terminate_backend rounds failed');
  }
}

// ---------- the checks ----------

/**
 * A sale's first status line (previous_status null) is its creation: the request's answer tells the seller,
 * and no postback announces it, except a PIX renewal, which no request created (README, Subscriptions).
 */
const ANSWERED_CREATION = `c.previous_status IS NULL AND NOT (s.payment_method = 'PIX' AND s.subscription_id IS NOT NULL AND s.billing_period > 0)`;

/** What the efi mode waits on after the load: withdrawals open, sends EM_PROCESSAMENTO, Pix the PSP received that the service has no receipt of. */
async function efiOpenWork(db, launcher) {
  const state = await launcher.state();
  const endToEndIds = state.pix.filter((pix) => pix.txid).map((pix) => pix.endToEndId);
  const [{ withdrawals, recorded, leaseHeld }] = (
    await db.query(
      `SELECT (SELECT count(*) FROM withdrawals WHERE status IN ('PENDING', 'PROCESSING'))::int AS withdrawals,
              (SELECT count(DISTINCT end_to_end_id) FROM pix_receipts WHERE end_to_end_id = ANY($1::text[]))::int AS recorded,
              ${RECONCILIATION_LEASE_HELD} AS "leaseHeld"`,
      [endToEndIds],
    )
  ).rows;
  // A Pix whose notification was lost waits for reconciliation; a pass a SIGKILL cut short holds its lease (ten
  // minutes, src/pix/pix-receipts.repository.ts) and no pass runs meanwhile: not waited on, reported by the checks.
  const pixUnrecorded = endToEndIds.length - recorded;
  return { withdrawals, sends: state.sends.filter((send) => send.status === 'EM_PROCESSAMENTO').length, pixUnrecorded: leaseHeld ? 0 : pixUnrecorded };
}

/** Whether reconciliation's lease is held by a pass older than any pass takes (one a killed life left): seconds held, or null. */
const RECONCILIATION_LEASE_HELD = `(SELECT round(extract(epoch FROM now() - claimed_at))::int FROM pix_reconciliation_cursor WHERE claimed_at < now() - interval '30 seconds')`;

/**
 * The efi mode's payout checks, against the simulator's record of the sends (its control endpoint): each idEnvio
 * registered at most once and each of a withdrawal; every COMPLETED withdrawal with exactly one REALIZADO send of
 * its net amount and its E2E id; no REALIZADO send of a withdrawal not COMPLETED (paid and given back); none open.
 */
async function efiChecks(q, launcher, fail, figures) {
  const state = await launcher.state();
  const withdrawals = new Map((await q(`SELECT id, status, net_amount_cents::int AS net, external_id FROM withdrawals`)).map((w) => [w.id, w]));
  const sendsOf = new Map();
  let withoutWithdrawal = 0;
  for (const send of state.sends) {
    const id = send.idEnvio.startsWith(EFI_SEND_ID_PREFIX) ? Number(send.idEnvio.slice(EFI_SEND_ID_PREFIX.length)) : NaN;
    if (!withdrawals.has(id)) {
      withoutWithdrawal += 1;
      continue;
    }
    sendsOf.set(id, [...(sendsOf.get(id) ?? []), send]);
  }
  const cents = (valor) => Math.round(Number(valor) * 100);
  let completedUnbacked = 0;
  let paidNotCompleted = 0;
  let open = 0;
  let unsent = 0;
  const examples = [];
  for (const w of withdrawals.values()) {
    const sends = sendsOf.get(w.id) ?? [];
    const realized = sends.filter((send) => send.status === 'REALIZADO');
    if (w.status === 'PENDING' || w.status === 'PROCESSING') open += 1;
    if (w.status === 'PENDING' && sends.length === 0) unsent += 1;
    if (w.status === 'COMPLETED' && !(realized.length === 1 && sends.length === 1 && cents(realized[0].valor) === w.net && realized[0].endToEndId === w.external_id)) {
      completedUnbacked += 1;
      if (examples.length < 5) examples.push(`withdrawal ${w.id} COMPLETED (net ${w.net}, ${w.external_id}): sends ${JSON.stringify(sends)}`);
    }
    if (w.status !== 'COMPLETED' && realized.length > 0) {
      paidNotCompleted += 1;
      if (examples.length < 5) examples.push(`withdrawal ${w.id} ${w.status}: sends ${JSON.stringify(sends)}`);
    }
  }
  const puts = Object.values(state.putsByIdEnvio);
  const accepted = Object.values(state.acceptedByIdEnvio);
  const mostPuts = puts.length ? Math.max(...puts) : 0;
  const mostAccepted = accepted.length ? Math.max(...accepted) : 0;
  const mostSends = sendsOf.size ? Math.max(...[...sendsOf.values()].map((sends) => sends.length)) : 0;
  const sendsByStatus = {};
  for (const send of state.sends) sendsByStatus[send.status] = (sendsByStatus[send.status] ?? 0) + 1;
  const inProcessing = sendsByStatus.EM_PROCESSAMENTO ?? 0;
  const [pixUnrecorded] = await q(`SELECT count(*)::int AS n FROM unnest($1::text[]) e LEFT JOIN pix_receipts r ON r.end_to_end_id = e WHERE r.end_to_end_id IS NULL`, [
    state.pix.filter((pix) => pix.txid).map((pix) => pix.endToEndId),
  ]);
  const [{ held: leaseHeld }] = await q(`SELECT ${RECONCILIATION_LEASE_HELD} AS held`);
  // Unknown while a killed life holds reconciliation's lease: late (up to its ten minutes), not missed.
  const pixLate = leaseHeld !== null ? pixUnrecorded.n : 0;
  const pixMissed = pixUnrecorded.n - pixLate;
  console.log(
    `chaos: Efí sends at the simulator: ${state.sends.length} (${Object.entries(sendsByStatus).map(([status, n]) => `${status} ${n}`).join(', ') || 'none'}); ` +
      `PUTs per idEnvio: most ${mostPuts} (${puts.filter((n) => n > 1).length} idEnvio sent again under the same id); answered 201 per idEnvio: most ${mostAccepted}; ` +
      `sends per withdrawal: most ${mostSends}; sends without a withdrawal: ${withoutWithdrawal}`,
  );
  console.log(
    `chaos: completed withdrawals without exactly one REALIZADO send of their net amount: ${completedUnbacked}; REALIZADO sends of withdrawals not COMPLETED: ${paidNotCompleted}; ` +
      `withdrawals left PENDING or PROCESSING: ${open} (${unsent} never sent); sends left EM_PROCESSAMENTO: ${inProcessing}`,
  );
  console.log(
    `chaos: the PSP's faults and outcomes: ${JSON.stringify(state.faults)}; Pix received: ${state.pix.length}, ${pixUnrecorded.n} unknown to the service` +
      `${leaseHeld !== null ? ` (reconciliation's lease held for ${leaseHeld} s by a pass a SIGKILL cut short: no pass runs until it expires, ten minutes after it was taken)` : ''}; ` +
      `requests or answers off the schemas: ${state.violations}`,
  );
  for (const example of examples) console.log(`  ${example}`);
  if (pixUnrecorded.n) {
    const unknown = state.pix.filter((pix) => pix.txid);
    const rows = await q(
      `SELECT e AS e2e, s.id, s.status, s.external_transaction_id AS txid FROM unnest($1::text[], $2::text[]) AS u(e, t)
         LEFT JOIN pix_receipts r ON r.end_to_end_id = u.e LEFT JOIN sales s ON s.external_transaction_id = u.t WHERE r.end_to_end_id IS NULL LIMIT 5`,
      [unknown.map((pix) => pix.endToEndId), unknown.map((pix) => pix.txid)],
    );
    for (const r of rows) console.log(`  Pix ${r.e2e} unknown to the service: txid ${r.txid ?? '?'}, sale ${r.id ?? 'none'} ${r.status ?? ''}`);
  }
  for (const violation of state.firstViolations) console.log(`  violation: ${violation}`);
  Object.assign(figures, {
    efiSends: state.sends.length,
    efiSendsByStatus: sendsByStatus,
    efiMostPutsPerIdEnvio: mostPuts,
    efiMostAcceptedPerIdEnvio: mostAccepted,
    mostPayoutsPerWithdrawal: mostSends,
    payoutsWithoutWithdrawal: withoutWithdrawal,
    completedWithdrawalsWithoutPayout: completedUnbacked,
    paidWithdrawalsNotCompleted: paidNotCompleted,
    withdrawalsOpen: open,
    withdrawalsUnsent: unsent,
    efiSendsInProcessing: inProcessing,
    pixReceivedUnknown: pixMissed,
    pixWaitingForReconciliationLease: pixLate,
    simulatorViolations: state.violations,
    efiFaults: state.faults,
  });
  if (mostAccepted > 1 || mostSends > 1) fail('a withdrawal was sent more than once at Efí');
  if (withoutWithdrawal) fail(`${withoutWithdrawal} sends at Efí without a withdrawal`);
  if (completedUnbacked) fail(`${completedUnbacked} completed withdrawals without exactly one REALIZADO send of their net amount`);
  if (paidNotCompleted) fail(`${paidNotCompleted} withdrawals paid by Efí (REALIZADO) but not COMPLETED`);
  if (open) fail(`${open} withdrawals left PENDING or PROCESSING after recovery`);
  if (inProcessing) fail(`${inProcessing} sends left EM_PROCESSAMENTO at the simulator`);
  if (pixMissed) fail(`${pixMissed} Pix received by the PSP unknown to the service, reconciliation free to run`);
  if (state.violations) fail(`${state.violations} requests or answers off Efí's or the BCB's schemas at the simulator`);
}

/**
 * The cielo mode's card checks, against the simulator's record of the payments and of the POST /1/sales it received
 * (its control endpoint): at most one POST and one payment per MerchantOrderId, none without a Cielo sale; every PAGO
 * Cielo sale with exactly one payment, captured (Status 2) of its amount, whose PaymentId is its externalTransactionId;
 * no approved or captured payment (Status 1 or 2) of a sale not PAGO: money taken from the cardholder, not credited.
 */
async function cieloChecks(q, launcher, fail, figures) {
  const state = await launcher.state();
  const sales = new Map(
    (await q(`SELECT s.id, s.status, s.payment_method AS method, s.amount_cents::int AS amount, s.external_transaction_id AS "paymentId", s.installments,
                     s.acquirer_return_code AS "returnCode",
                     COALESCE((SELECT sum(r.amount_cents) FROM sale_refunds r WHERE r.sale_id = s.id AND r.status = 'COMPLETED'), 0)::int AS refunded,
                     COALESCE((SELECT sum(r.amount_cents) FROM sale_refunds r WHERE r.sale_id = s.id AND r.status = 'PENDING'), 0)::int AS "refundPending"
                FROM sales s WHERE s.provider = 'cielo' AND s.payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')`)).map((sale) => [sale.id, sale]),
  );
  const paymentsOf = new Map();
  let withoutSale = 0;
  const examples = [];
  // Boletos are cieloBoletoChecks'.
  for (const payment of state.payments.filter((one) => one.type !== 'Boleto')) {
    const rest = payment.merchantOrderId.startsWith(CIELO_ORDER_ID_PREFIX) ? payment.merchantOrderId.slice(CIELO_ORDER_ID_PREFIX.length) : '';
    const id = /^[0-9]+$/.test(rest) ? Number(rest) : NaN;
    if (!sales.has(id)) {
      withoutSale += 1;
      if (examples.length < 5) examples.push(`payment without a Cielo sale: ${JSON.stringify(payment)}`);
      continue;
    }
    paymentsOf.set(id, [...(paymentsOf.get(id) ?? []), payment]);
  }
  const approved = (payment) => payment.status === 1 || payment.status === 2;
  // What Cielo voided of each payment against the refunds booked: never less than the COMPLETED ones (money booked
  // as given back that Cielo kept), never more than those and the PENDING ones (a void made twice, or not booked).
  let voidsOffRefunds = 0;
  let refundsPending = 0;
  for (const sale of sales.values()) {
    refundsPending += sale.refundPending > 0 ? 1 : 0;
    const voided = (paymentsOf.get(sale.id) ?? []).reduce((sum, payment) => sum + (payment.voidedAmount ?? 0), 0);
    if (voided < sale.refunded || voided > sale.refunded + sale.refundPending) {
      voidsOffRefunds += 1;
      if (examples.length < 10) examples.push(`sale ${sale.id} ${sale.status}: refunds COMPLETED ${sale.refunded}, PENDING ${sale.refundPending} cents; voided at Cielo ${voided}`);
    }
  }
  let paidUnbacked = 0;
  let approvedNotPaid = 0;
  const failedWith = { noPayment: 0, payment: 0 };
  const salesByStatus = {};
  for (const sale of sales.values()) {
    const payments = paymentsOf.get(sale.id) ?? [];
    salesByStatus[`${sale.method} ${sale.status}`] = (salesByStatus[`${sale.method} ${sale.status}`] ?? 0) + 1;
    if (sale.status === 'FALHA') failedWith[payments.length ? 'payment' : 'noPayment'] += 1;
    if (sale.status === 'PAGO') {
      const [payment] = payments;
      const backed = payments.length === 1 && payment.status === 2 && payment.capturedAmount === sale.amount && payment.paymentId.toLowerCase() === String(sale.paymentId ?? '').toLowerCase();
      if (!backed) {
        paidUnbacked += 1;
        if (examples.length < 10) examples.push(`sale ${sale.id} PAGO (${sale.amount} cents, PaymentId ${sale.paymentId}): payments ${JSON.stringify(payments)}`);
      }
    } else if (payments.some(approved)) {
      approvedNotPaid += 1;
      if (examples.length < 10) examples.push(`sale ${sale.id} ${sale.status} (${sale.amount} cents, PaymentId ${sale.paymentId ?? 'none'}, return code ${sale.returnCode ?? 'none'}): payments ${JSON.stringify(payments)}`);
    }
  }
  const posts = Object.values(state.postsByOrderId);
  const answered = Object.values(state.answeredByOrderId);
  const mostPosts = posts.length ? Math.max(...posts) : 0;
  const mostAnswered = answered.length ? Math.max(...answered) : 0;
  const mostPayments = paymentsOf.size ? Math.max(...[...paymentsOf.values()].map((payments) => payments.length)) : 0;
  const ordersWithSeveral = [...paymentsOf.values()].filter((payments) => payments.length > 1).length;
  // A Pending payment (Status 12) the simulator never settled: its sale cannot be final either.
  const stillPending = state.payments.filter((payment) => payment.type !== 'Boleto' && payment.status === 12).length;
  const paymentsByStatus = {};
  for (const payment of state.payments) paymentsByStatus[payment.status] = (paymentsByStatus[payment.status] ?? 0) + 1;
  const instalments = {};
  for (const payment of state.payments) if (payment.type === 'CreditCard' && payment.status === 2) instalments[payment.installments] = (instalments[payment.installments] ?? 0) + 1;
  console.log(
    `\nchaos: Cielo at the simulator: ${state.payments.length} payments (by Status: ${Object.entries(paymentsByStatus).map(([status, n]) => `${status}: ${n}`).join(', ') || 'none'}); ` +
      `POST /1/sales per MerchantOrderId: most ${mostPosts} (${posts.filter((n) => n > 1).length} posted more than once), answered 201: most ${mostAnswered}; ` +
      `payments per MerchantOrderId: most ${mostPayments} (${ordersWithSeveral} with more than one); payments without a Cielo sale: ${withoutSale}; ` +
      `look-ups by MerchantOrderId ${state.lookupsByOrderId}, by PaymentId ${state.lookupsByPaymentId}`,
  );
  console.log(`chaos: Cielo sales by status: ${Object.entries(salesByStatus).map(([key, n]) => `${key} ${n}`).join(', ') || 'none'}; FALHA with no payment at Cielo ${failedWith.noPayment}, with one ${failedWith.payment}; captured credit payments by instalments: ${JSON.stringify(instalments)}`);
  console.log(
    `chaos: PAGO Cielo sales without exactly one captured payment of their amount under their PaymentId: ${paidUnbacked}; approved payments of a sale not PAGO: ${approvedNotPaid}; left Pending: ${stillPending}; ` +
      `faults played on POST /1/sales: ${JSON.stringify(state.faults)}; requests or answers off the schemas: ${state.violations}`,
  );
  const refundsByStatus = Object.fromEntries((await q(`SELECT r.status, count(*)::int AS n FROM sale_refunds r JOIN sales s ON s.id = r.sale_id WHERE s.provider = 'cielo' GROUP BY r.status`)).map((row) => [row.status, row.n]));
  console.log(
    `chaos: Cielo refunds by status: ${JSON.stringify(refundsByStatus)}; sales whose voids at Cielo differ from their refunds: ${voidsOffRefunds}; sales with a refund still PENDING: ${refundsPending}; ` +
      `Cielo subscriptions: ${(await q(`SELECT count(*)::int AS n FROM subscriptions WHERE provider = 'cielo'`))[0].n}, renewal sales ${(await q(`SELECT count(*)::int AS n FROM sales WHERE provider = 'cielo' AND billing_period > 0`))[0].n}`,
  );
  for (const example of examples) console.log(`  ${example}`);
  for (const violation of state.firstViolations) console.log(`  violation: ${violation}`);
  Object.assign(figures, {
    cieloSales: sales.size,
    cieloSalesByStatus: salesByStatus,
    cieloFailedWithoutPayment: failedWith.noPayment,
    cieloFailedWithPayment: failedWith.payment,
    cieloPayments: state.payments.length,
    cieloPaymentsByStatus: paymentsByStatus,
    cieloMostPostsPerOrderId: mostPosts,
    cieloMostPaymentsPerOrderId: mostPayments,
    cieloPaymentsWithoutSale: withoutSale,
    cieloPaidSalesUnbacked: paidUnbacked,
    cieloApprovedPaymentsOfUnpaidSales: approvedNotPaid,
    cieloPaymentsLeftPending: stillPending,
    cieloLookupsByOrderId: state.lookupsByOrderId,
    cieloFaults: state.faults,
    cieloSimulatorViolations: state.violations,
  });
  if (mostPosts > 1) fail(`${posts.filter((n) => n > 1).length} MerchantOrderIds posted more than once to Cielo (POST /1/sales has no idempotency)`);
  if (ordersWithSeveral) fail(`${ordersWithSeveral} MerchantOrderIds with more than one payment at Cielo (a double charge)`);
  if (withoutSale) fail(`${withoutSale} payments at Cielo without a Cielo sale`);
  if (paidUnbacked) fail(`${paidUnbacked} PAGO Cielo sales without exactly one captured payment of their amount under their PaymentId`);
  if (approvedNotPaid) fail(`${approvedNotPaid} approved payments at Cielo whose sale is not PAGO (money taken from the cardholder, not credited)`);
  if (stillPending) fail(`${stillPending} payments left Pending at the simulator`);
  if (state.violations) fail(`${state.violations} requests or answers off Cielo's schemas at the simulator`);
  if (voidsOffRefunds) fail(`${voidsOffRefunds} Cielo sales whose voids at Cielo differ from their refunds (a void made twice, or a refund booked that Cielo did not make)`);
  if (refundsPending) fail(`${refundsPending} Cielo sales with a refund still PENDING after recovery`);
}

/**
 * CHAOS_BOLETOS=cielo's checks, against the simulator's record of the boletos: every boleto Cielo shows paid is its
 * sale's PAGO of its amount (under its PaymentId), or a late payment of that amount booked once on its CANCELADO sale;
 * every PAGO boleto sale is a boleto Cielo shows paid of its amount; a boleto Cielo registered for no sale (its
 * issuance answered too late for the look-up by MerchantOrderId: nobody was shown its line) is counted, and fails
 * only if paid.
 */
async function cieloBoletoChecks(q, launcher, fail, figures) {
  const state = await launcher.state();
  const sales = new Map(
    (await q(`SELECT s.id, s.status, s.amount_cents::int AS amount, s.provider_amount_cents::int AS "providerAmount", s.external_transaction_id AS "paymentId",
                     l.amount_cents::int AS "lateAmount", l.payment_id AS "latePaymentId"
                FROM sales s LEFT JOIN late_boleto_payments l ON l.sale_id = s.id
               WHERE s.provider = 'cielo' AND s.payment_method = 'BOLETO'`)).map((sale) => [sale.id, sale]),
  );
  const boletos = state.payments.filter((payment) => payment.type === 'Boleto');
  const examples = [];
  let orphans = 0;
  let orphansPaid = 0;
  let paidUnbooked = 0;
  let paidLate = 0;
  const boletoOf = new Map();
  for (const boleto of boletos) {
    const rest = boleto.merchantOrderId.startsWith(CIELO_ORDER_ID_PREFIX) ? boleto.merchantOrderId.slice(CIELO_ORDER_ID_PREFIX.length) : '';
    const sale = sales.get(/^[0-9]+$/.test(rest) ? Number(rest) : NaN);
    if (!sale || String(sale.paymentId ?? '').toLowerCase() !== boleto.paymentId.toLowerCase()) {
      orphans += 1;
      if (boleto.status === 2) orphansPaid += 1;
      continue;
    }
    boletoOf.set(sale.id, boleto);
    if (boleto.status !== 2) continue;
    const paid = boleto.capturedAmount ?? boleto.amount;
    const applied = sale.status === 'PAGO' && paid === sale.amount && sale.providerAmount === paid;
    const late = sale.status === 'CANCELADO' && sale.lateAmount === paid && String(sale.latePaymentId).toLowerCase() === boleto.paymentId.toLowerCase();
    if (late) paidLate += 1;
    if (!applied && !late) {
      paidUnbooked += 1;
      if (examples.length < 10) examples.push(`boleto ${boleto.paymentId} paid ${paid} at Cielo; its sale ${JSON.stringify(sale)}`);
    }
  }
  let paidUnbacked = 0;
  for (const sale of sales.values()) {
    if (sale.status !== 'PAGO') continue;
    const boleto = boletoOf.get(sale.id);
    if (!boleto || boleto.status !== 2 || (boleto.capturedAmount ?? boleto.amount) !== sale.amount) {
      paidUnbacked += 1;
      if (examples.length < 10) examples.push(`boleto sale ${sale.id} PAGO (${sale.amount} cents) with Cielo's boleto ${JSON.stringify(boleto ?? null)}`);
    }
  }
  const byStatus = {};
  for (const sale of sales.values()) byStatus[sale.status] = (byStatus[sale.status] ?? 0) + 1;
  console.log(
    `\nchaos: Cielo boletos: ${boletos.length} registered (${boletos.filter((one) => one.status === 2).length} paid), sales by status ${JSON.stringify(byStatus)}; ` +
      `paid after cancellation, owed back: ${paidLate}; paid at Cielo and not booked: ${paidUnbooked}; PAGO without a boleto paid of its amount: ${paidUnbacked}; ` +
      `registered for no sale (never shown): ${orphans}, of them paid: ${orphansPaid}`,
  );
  for (const example of examples) console.log(`  ${example}`);
  Object.assign(figures, { cieloBoletos: boletos.length, cieloBoletoSalesByStatus: byStatus, cieloBoletosPaidLate: paidLate, cieloBoletosPaidUnbooked: paidUnbooked, cieloBoletoSalesUnbacked: paidUnbacked, cieloBoletoOrphans: orphans });
  if (paidUnbooked) fail(`${paidUnbooked} boletos paid at Cielo not booked (neither their sale PAGO nor a late payment)`);
  if (paidUnbacked) fail(`${paidUnbacked} PAGO boleto sales without a boleto Cielo shows paid of their amount`);
  if (orphansPaid) fail(`${orphansPaid} boletos registered for no sale were paid`);
}

/** What the boleto mode waits on after the load: boletos Cielo shows paid whose sale is neither PAGO nor owes them back yet. */
async function cieloBoletosUnbooked(db, launcher) {
  const paid = (await launcher.state()).payments.filter((payment) => payment.type === 'Boleto' && payment.status === 2).map((payment) => payment.paymentId);
  if (paid.length === 0) return 0;
  const [{ booked }] = (
    await db.query(
      `SELECT count(*)::int AS booked FROM sales s
        WHERE s.provider = 'cielo' AND s.payment_method = 'BOLETO' AND lower(s.external_transaction_id) = ANY($1::text[])
          AND (s.status = 'PAGO' OR EXISTS (SELECT 1 FROM late_boleto_payments l WHERE l.sale_id = s.id))`,
      [paid.map((id) => id.toLowerCase())],
    )
  ).rows;
  return paid.length - booked;
}

async function checks(db, databaseUrl, receiver, launcher, cieloLauncher) {
  const failures = [];
  const fail = (message) => failures.push(message);
  const figures = {};
  const q = async (sql, params) => (await db.query(sql, params)).rows;

  console.log('\nchaos: ledger:verify on the chaos database');
  const verify = spawnSync(process.execPath, entry('ledger/ledger-verify'), { cwd: root, env: { ...env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });
  for (const line of `${verify.stdout}${verify.stderr}`.split('\n').filter(Boolean)) console.log(`  ${line}`);
  console.log(`  exit code ${verify.status}`);
  if (verify.status !== 0) fail(`ledger:verify exited ${verify.status}`);
  figures.ledgerVerifyExitCode = verify.status;
  const ledgerSum = /the whole ledger sums to (-?\d+) cents/.exec(verify.stdout);
  figures.ledgerSumCents = ledgerSum ? Number(ledgerSum[1]) : null;

  const sales = await q(`SELECT payment_method, status, count(*)::int AS n FROM sales GROUP BY 1, 2 ORDER BY 1, 2`);
  console.log(`\nchaos: sales by status (${sales.reduce((s, r) => s + r.n, 0)} sales)`);
  for (const r of sales) console.log(`  ${r.payment_method.padEnd(12)} ${r.status.padEnd(17)} ${r.n}`);
  const [stuck] = await q(`SELECT count(*)::int AS n FROM sales WHERE status = 'EM_PROCESSAMENTO'`);
  const [refundsDue] = await q(`SELECT count(*)::int AS n FROM sales WHERE refund_due_at IS NOT NULL AND status = 'PAGO'`);
  const [twiceUnderOneKey] = await q(`SELECT count(*)::int AS n FROM (SELECT metadata->>'chaosKey' FROM sales WHERE metadata ? 'chaosKey' GROUP BY 1 HAVING count(*) > 1) d`);
  const [pendingNotPix] = await q(`SELECT count(*)::int AS n FROM sales WHERE status = 'PENDENTE' AND payment_method NOT IN ('PIX', 'BOLETO', 'TRANSFER')`);
  console.log(`  left EM_PROCESSAMENTO after recovery: ${stuck.n}; paid but owing a refund (stopped subscription): ${refundsDue.n}; card sales PENDENTE: ${pendingNotPix.n}; Idempotency-Keys with more than one sale: ${twiceUnderOneKey.n}`);
  if (twiceUnderOneKey.n) fail(`${twiceUnderOneKey.n} Idempotency-Keys made more than one sale`);
  figures.keysWithMoreThanOneSale = twiceUnderOneKey.n;
  if (stuck.n) {
    // A sale leased by a life the chaos killed stays out of recovery for the lease's minute (src/database/leases.ts).
    const leases = await q(
      `SELECT id, subscription_id, round(extract(epoch FROM now() - updated_at))::int AS age, round(extract(epoch FROM now() - provider_checked_at))::int AS leased
         FROM sales WHERE status = 'EM_PROCESSAMENTO' ORDER BY id LIMIT 10`,
    );
    for (const r of leases) console.log(`  EM_PROCESSAMENTO: sale ${r.id}${r.subscription_id ? ` (subscription ${r.subscription_id})` : ''}, last moved ${r.age} s ago, leased ${r.leased === null ? 'never' : `${r.leased} s ago`}`);
    fail(`${stuck.n} sales left EM_PROCESSAMENTO after recovery`);
  }
  if (refundsDue.n) fail(`${refundsDue.n} sales still owe the refund of a stopped subscription's charge`);
  if (pendingNotPix.n) fail(`${pendingNotPix.n} card sales PENDENTE`);
  figures.sales = sales.reduce((sum, r) => sum + r.n, 0);
  figures.salesByStatus = Object.fromEntries(sales.map((r) => [`${r.payment_method} ${r.status}`, r.n]));
  figures.salesInProcessing = stuck.n;

  const withdrawals = await q(`SELECT status, count(*)::int AS n FROM withdrawals GROUP BY 1 ORDER BY 1`);
  console.log(`\nchaos: withdrawals by status (${withdrawals.reduce((s, r) => s + r.n, 0)} withdrawals)`);
  for (const r of withdrawals) console.log(`  ${r.status.padEnd(12)} ${r.n}`);

  figures.withdrawals = withdrawals.reduce((sum, r) => sum + r.n, 0);
  figures.withdrawalsByStatus = Object.fromEntries(withdrawals.map((r) => [r.status, r.n]));
  const subscriptions = await q(`SELECT status, count(*)::int AS n FROM subscriptions GROUP BY 1 ORDER BY 1`);
  const [renewalSales] = await q(`SELECT count(*)::int AS n FROM sales WHERE subscription_id IS NOT NULL AND billing_period > 0`);
  console.log(`\nchaos: subscriptions by status: ${subscriptions.map((r) => `${r.status} ${r.n}`).join(', ') || 'none'}; renewal sales (billing period > 0): ${renewalSales.n}`);

  // The sandbox acquirer: one charge per reference (its primary key), each for a card sale (of the sandbox's).
  const [charges] = await q(`SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome = 'APPROVED')::int AS approved, count(*) FILTER (WHERE outcome = 'VOIDED')::int AS voided,
                                    count(*) FILTER (WHERE refunded_at IS NOT NULL)::int AS refunded FROM sandbox_card_charges`);
  const [duplicateCharges] = await q(`SELECT count(*)::int AS n FROM (SELECT reference FROM sandbox_card_charges GROUP BY reference HAVING count(*) > 1) d`);
  const [orphanCharges] = await q(`SELECT count(*)::int AS n FROM sandbox_card_charges c LEFT JOIN sales s ON s.id::text = c.reference WHERE s.id IS NULL OR s.payment_method NOT IN ('CREDIT_CARD', 'DEBIT_CARD')`);
  const [paidWithoutCharge] = await q(`SELECT count(*)::int AS n FROM sales s LEFT JOIN sandbox_card_charges c ON c.reference = s.id::text AND c.outcome = 'APPROVED'
                                       WHERE s.provider = 'sandbox' AND s.payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND s.status IN ('PAGO', 'ESTORNADO', 'CHARGEBACK') AND c.reference IS NULL`);
  const [chargedButUnpaid] = await q(`SELECT count(*)::int AS n FROM sales s JOIN sandbox_card_charges c ON c.reference = s.id::text AND c.outcome = 'APPROVED'
                                      WHERE s.status NOT IN ('PAGO', 'ESTORNADO', 'CHARGEBACK')`);
  console.log(`\nchaos: sandbox acquirer: ${charges.n} charge records (${charges.approved} approved, ${charges.voided} voided, ${charges.refunded} refunded by the acquirer); references with more than one: ${duplicateCharges.n}; without a card sale: ${orphanCharges.n}; paid card sales without an approved charge: ${paidWithoutCharge.n}; approved charges of a sale not paid: ${chargedButUnpaid.n}`);
  Object.assign(figures, { chargeRecords: charges.n, chargeReferencesDuplicated: duplicateCharges.n, chargesWithoutSale: orphanCharges.n, paidCardSalesWithoutCharge: paidWithoutCharge.n, approvedChargesOfUnpaidSales: chargedButUnpaid.n });
  if (duplicateCharges.n) fail(`${duplicateCharges.n} charge references recorded more than once`);
  if (orphanCharges.n) fail(`${orphanCharges.n} sandbox charges without a card sale`);
  if (paidWithoutCharge.n) fail(`${paidWithoutCharge.n} paid card sales without an approved charge`);
  if (chargedButUnpaid.n) fail(`${chargedButUnpaid.n} approved charges whose sale is not paid (money taken from the customer, not credited)`);

  if (cielo) await cieloChecks(q, cieloLauncher, fail, figures);
  if (cieloBoletos) await cieloBoletoChecks(q, cieloLauncher, fail, figures);
  if (efi) await efiChecks(q, launcher, fail, figures);
  else {
    const [payouts] = await q(`SELECT count(*)::int AS n, count(*) FILTER (WHERE status NOT IN ('CANCELLED', 'REJECTED'))::int AS accepted FROM sandbox_payouts`);
    const [duplicatePayouts] = await q(`SELECT count(*)::int AS n FROM (SELECT reference FROM sandbox_payouts GROUP BY reference HAVING count(*) > 1) d`);
    const [orphanPayouts] = await q(`SELECT count(*)::int AS n FROM sandbox_payouts p LEFT JOIN withdrawals w ON w.id::text = p.reference WHERE w.id IS NULL`);
    const [maxPerWithdrawal] = await q(`SELECT coalesce(max(n), 0)::int AS n FROM (SELECT count(*) AS n FROM sandbox_payouts GROUP BY reference) p`);
    const [completedUnpaid] = await q(`SELECT count(*)::int AS n FROM withdrawals w LEFT JOIN sandbox_payouts p ON p.reference = w.id::text AND p.status = 'COMPLETED' WHERE w.status = 'COMPLETED' AND p.reference IS NULL`);
    const [unsent] = await q(`SELECT count(*)::int AS n FROM withdrawals w LEFT JOIN sandbox_payouts p ON p.reference = w.id::text WHERE w.status IN ('PENDING', 'PROCESSING') AND p.reference IS NULL`);
    const [paidButReturned] = await q(
      `SELECT count(*)::int AS n FROM withdrawals w JOIN sandbox_payouts p ON p.reference = w.id::text AND p.status NOT IN ('CANCELLED', 'REJECTED') WHERE w.status IN ('CANCELLED', 'FAILED')`,
    );
    console.log(`chaos: sandbox payouts: ${payouts.n} records (${payouts.accepted} taken, not refused); most per withdrawal: ${maxPerWithdrawal.n}; references with more than one: ${duplicatePayouts.n}; without a withdrawal: ${orphanPayouts.n}; completed withdrawals without a payout: ${completedUnpaid.n}; pending withdrawals never sent after recovery: ${unsent.n}; returned withdrawals whose payout stands: ${paidButReturned.n}`);
    Object.assign(figures, { payoutRecords: payouts.n, mostPayoutsPerWithdrawal: maxPerWithdrawal.n, payoutsWithoutWithdrawal: orphanPayouts.n, completedWithdrawalsWithoutPayout: completedUnpaid.n, withdrawalsUnsent: unsent.n });
    if (duplicatePayouts.n || maxPerWithdrawal.n > 1) fail('a withdrawal was paid out more than once');
    if (orphanPayouts.n) fail(`${orphanPayouts.n} payouts without a withdrawal`);
    if (completedUnpaid.n) fail(`${completedUnpaid.n} completed withdrawals without a payout`);
    if (unsent.n) fail(`${unsent.n} pending withdrawals never sent after recovery`);
    // The sandbox's callback route moves its record of the payout before the withdrawal: a withdrawal whose
    // amount came back has a payout the provider cancelled or rejected, never one it made.
    if (paidButReturned.n) fail(`${paidButReturned.n} withdrawals returned to the seller whose payout the provider made`);
  }

  // Every status change produced its event: the outbox's postbacks of each sale against its status history
  // (a refund's own postbacks, refund.status_changed on the same channel, follow the refund, not the sale).
  const [saleEvents] = await q(`
    WITH changes AS (
      SELECT c.sale_id, coalesce(c.previous_status, '-') || '>' || c.status AS move, count(*) AS n
        FROM sale_status_changes c JOIN sales s ON s.id = c.sale_id
       WHERE s.postback_url IS NOT NULL AND NOT (${ANSWERED_CREATION}) GROUP BY 1, 2),
    events AS (
      SELECT substring(aggregate_key FROM 6)::int AS sale_id, coalesce(payload->>'previousStatus', '-') || '>' || (payload->>'status') AS move, count(*) AS n
        FROM outbox_events WHERE channel = 'SALE_POSTBACK' AND event_type <> 'refund.status_changed' GROUP BY 1, 2)
    SELECT (SELECT coalesce(sum(n), 0) FROM changes)::int AS changes, (SELECT coalesce(sum(n), 0) FROM events)::int AS events,
           count(*) FILTER (WHERE coalesce(c.n, 0) > coalesce(e.n, 0))::int AS missing,
           count(*) FILTER (WHERE coalesce(e.n, 0) > coalesce(c.n, 0))::int AS extra
      FROM changes c FULL JOIN events e ON e.sale_id = c.sale_id AND e.move = c.move`);
  const [creations] = await q(`SELECT count(*)::int AS n FROM sale_status_changes c JOIN sales s ON s.id = c.sale_id WHERE s.postback_url IS NOT NULL AND ${ANSWERED_CREATION}`);
  console.log(`\nchaos: sale status changes (sales with a postbackUrl): ${saleEvents.changes} moves plus ${creations.n} creations answered to the client (not announced); their postbacks in the outbox: ${saleEvents.events}; changes without their event: ${saleEvents.missing}; events without their change: ${saleEvents.extra}`);
  Object.assign(figures, { saleStatusChanges: saleEvents.changes, saleChangesWithoutEvent: saleEvents.missing, saleEventsWithoutChange: saleEvents.extra });
  if (saleEvents.missing) fail(`${saleEvents.missing} (sale, move) pairs without their postback`);
  if (saleEvents.extra) fail(`${saleEvents.extra} (sale, move) pairs with a postback but no status change`);

  const [withdrawalEvents] = await q(`
    WITH changes AS (
      SELECT c.withdrawal_id, CASE c.status WHEN 'FAILED' THEN 'REJECTED' ELSE c.status END AS status, count(*) * (SELECT count(*) FROM withdrawal_webhooks h WHERE h.seller_id = w.seller_id) AS n
        FROM withdrawal_status_changes c JOIN withdrawals w ON w.id = c.withdrawal_id
       WHERE c.status IN ('PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED') GROUP BY 1, 2, w.seller_id),
    events AS (
      SELECT (payload->>'id')::int AS withdrawal_id, payload->>'status' AS status, count(*) AS n FROM outbox_events WHERE channel = 'WITHDRAWAL_WEBHOOK' GROUP BY 1, 2)
    SELECT (SELECT coalesce(sum(n), 0) FROM changes)::int AS changes, (SELECT coalesce(sum(n), 0) FROM events)::int AS events,
           count(*) FILTER (WHERE coalesce(c.n, 0) > coalesce(e.n, 0))::int AS missing,
           count(*) FILTER (WHERE coalesce(e.n, 0) > coalesce(c.n, 0))::int AS extra
      FROM changes c FULL JOIN events e ON e.withdrawal_id = c.withdrawal_id AND e.status = c.status`);
  console.log(`chaos: withdrawal status changes announced by webhook: ${withdrawalEvents.changes}; their webhook events in the outbox: ${withdrawalEvents.events}; changes without their event: ${withdrawalEvents.missing}; events without their change: ${withdrawalEvents.extra}`);
  Object.assign(figures, { withdrawalStatusChanges: withdrawalEvents.changes, withdrawalChangesWithoutEvent: withdrawalEvents.missing, withdrawalEventsWithoutChange: withdrawalEvents.extra });
  if (withdrawalEvents.missing) fail(`${withdrawalEvents.missing} withdrawal moves without their webhook`);
  if (withdrawalEvents.extra) fail(`${withdrawalEvents.extra} withdrawal webhooks without a move`);

  // Each event delivered, and received at least once.
  const outbox = await q(`SELECT channel, status, count(*)::int AS n FROM outbox_events GROUP BY 1, 2 ORDER BY 1, 2`);
  console.log(`\nchaos: outbox events: ${outbox.map((r) => `${r.channel} ${r.status} ${r.n}`).join(', ')}`);
  const notDelivered = outbox.filter((r) => r.status !== 'DELIVERED').reduce((s, r) => s + r.n, 0);
  if (notDelivered) fail(`${notDelivered} outbox events not DELIVERED`);
  const signed = await q(`SELECT event_id::text AS id FROM outbox_events WHERE signed`);
  const unsigned = await q(`SELECT (payload->>'id') || ':' || (payload->>'status') AS key, count(*)::int AS n FROM outbox_events WHERE NOT signed GROUP BY 1`);
  const neverReceived = signed.filter((r) => !receiver.eventIds.has(r.id)).length;
  const webhooksMissing = unsigned.filter((r) => (receiver.webhooks.get(r.key) ?? 0) < r.n).length;
  const receivedTwice = [...receiver.eventIds.values()].filter((n) => n > 1).length;
  const [attempts] = await q(`SELECT count(*)::int AS n FROM delivery_attempts`);
  console.log(`chaos: receiver: ${receiver.requests()} requests; postbacks by X-Event-Id: ${signed.length} events, ${signed.length - neverReceived} received (${receivedTwice} more than once), ${neverReceived} never received; withdrawal webhooks: ${unsigned.reduce((s, r) => s + r.n, 0)} events, ${webhooksMissing} (withdrawal, status) pairs short; delivery attempts recorded: ${attempts.n}`);
  if (neverReceived) fail(`${neverReceived} postbacks never received`);
  if (webhooksMissing) fail(`${webhooksMissing} withdrawal webhooks never received`);
  Object.assign(figures, {
    outboxEvents: outbox.reduce((sum, r) => sum + r.n, 0),
    outboxNotDelivered: notDelivered,
    eventsNeverReceived: neverReceived + webhooksMissing,
    eventsReceivedMoreThanOnce: receivedTwice,
  });
  return { failures, figures };
}

// ---------- main ----------

async function main() {
  if (!settings.fromSource && !fs.existsSync(path.join(root, 'dist', 'src', 'main.js'))) {
    console.log('chaos: no dist/, running npm run build');
    const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  if (settings.fromSource) require('ts-node/register/transpile-only');
  const { prepareDatabase } = require(path.join(root, settings.fromSource ? 'src' : 'dist/src', 'database', 'prepare-database'));
  const baseUrl = new URL(env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/payment_gateway');
  baseUrl.pathname = `/payment_gateway_chaos_${Date.now()}_${process.pid}`;
  const databaseUrl = baseUrl.toString();
  const databaseName = baseUrl.pathname.slice(1);
  const maintenanceUrl = new URL(databaseUrl);
  maintenanceUrl.pathname = '/postgres';

  const started = new Date();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
  console.log(`chaos: ${os.cpus().length} cores, node ${process.version}, commit ${commit || '?'}, ${started.toISOString()}, database ${databaseName}, service ${settings.fromSource ? 'src/main.ts (ts-node)' : 'dist/src/main.js'}`);
  console.log(`chaos: ${settings.kills} kills about every ${settings.killEveryMs} ms, pg_terminate_backend about every ${settings.pgTerminateEveryMs || '∞'} ms, ${settings.concurrency} clients, ${settings.sellers} sellers`);
  if (!['sandbox', 'efi'].includes(settings.payouts)) throw new Error(`CHAOS_PAYOUTS must be sandbox or efi, not ${settings.payouts}`);
  if (!['sandbox', 'cielo'].includes(settings.cards)) throw new Error(`CHAOS_CARDS must be sandbox or cielo, not ${settings.cards}`);
  if (!['sandbox', 'cielo'].includes(settings.boletos)) throw new Error(`CHAOS_BOLETOS must be sandbox or cielo, not ${settings.boletos}`);
  if (cieloBoletos) console.log('chaos: boleto sales through Cielo (BOLETO_PROVIDER=cielo) at the Cielo simulator, paid there, notified or left to the poll; sellers funded by sandbox PIX');
  if (efi) console.log('chaos: payouts through Efí (PAYOUT_PROVIDER=efi) and PIX through the API Pix (PIX_PROVIDER=api-pix), both at the simulator');
  if (cielo) console.log('chaos: card sales, card subscriptions (renewed by token) and refunds (voids) through Cielo (CARD_PROVIDER=cielo) at the Cielo simulator; chargebacks stay the operator\'s');
  await prepareDatabase(databaseUrl);

  const receiver = await startReceiver();
  const port = await freePort();
  // efi mode: the sellers' CPFs (each withdraws to the key of its own), and the simulator that owns them.
  const cpfs = Array.from({ length: settings.sellers }, () => randomCpf());
  let launcher = null;
  let efiEnv = {};
  if (efi) {
    const clientId = 'gateway-chaos';
    const clientSecret = crypto.randomBytes(16).toString('hex');
    const receiverKey = crypto.randomUUID();
    const keyOwners = Object.fromEntries(cpfs.map((cpf, i) => [cpf, { nome: `Loja Chaos ${i}`, cpf }]));
    keyOwners[SOMEONE_ELSES_KEY] = { nome: 'Outra Pessoa', cpf: '11144477735' };
    launcher = await startLauncher('api-pix', { CHAOS_EFI_CLIENT_ID: clientId, CHAOS_EFI_CLIENT_SECRET: clientSecret, CHAOS_EFI_RECEIVER_KEY: receiverKey, CHAOS_EFI_KEY_OWNERS: JSON.stringify(keyOwners) });
    console.log(`chaos: simulator at ${launcher.baseUrl} (control ${launcher.controlUrl})`);
    efiEnv = {
      // SANDBOX_CLOCK_MOVES_REAL_RECORDS is refused with NODE_ENV=production.
      NODE_ENV: 'test',
      PIX_PROVIDER: 'api-pix',
      PAYOUT_PROVIDER: 'efi',
      API_PIX_BASE_URL: launcher.baseUrl,
      API_PIX_TOKEN_URL: launcher.tokenUrl,
      API_PIX_CLIENT_ID: clientId,
      API_PIX_CLIENT_SECRET: clientSecret,
      API_PIX_CERT_FILE: launcher.clientCertFile,
      API_PIX_KEY_FILE: launcher.clientKeyFile,
      API_PIX_CA_FILE: launcher.caFile,
      API_PIX_RECEIVER_KEY: receiverKey,
      API_PIX_WEBHOOK_URL: `http://127.0.0.1:${port}/psp/notifications/${crypto.randomBytes(16).toString('hex')}`,
      API_PIX_RECONCILE_SECONDS: '5',
      API_PIX_TIMEOUT_MS: '2000',
      EFI_RESEND_AFTER_SECONDS: '3',
      EFI_SEND_ID_PREFIX,
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
    };
  }
  // cielo mode: the Cielo simulator, in a process of its own too.
  let cieloLauncher = null;
  let cieloEnv = {};
  if (cielo || cieloBoletos) {
    const notificationUrl = `http://127.0.0.1:${port}/cielo/notifications/${crypto.randomBytes(16).toString('hex')}`;
    cieloLauncher = await startLauncher('cielo', {
      CHAOS_CIELO_MERCHANT_ID: crypto.randomUUID(),
      CHAOS_CIELO_MERCHANT_KEY: crypto.randomBytes(20).toString('hex').toUpperCase(),
      ...(cieloBoletos ? { CHAOS_CIELO_NOTIFICATION_URL: notificationUrl } : {}),
    });
    console.log(`chaos: Cielo simulator at ${cieloLauncher.env.CIELO_API_URL} (query ${cieloLauncher.env.CIELO_QUERY_URL}, control ${cieloLauncher.controlUrl})`);
    cieloEnv = {
      ...cieloLauncher.env,
      CIELO_ORDER_ID_PREFIX,
      // Short, so that a sale whose POST never reached Cielo (a 5xx, a kill before it) is FALHA within the recovery.
      CIELO_TIMEOUT_MS: '2000',
      CIELO_NOT_FOUND_AFTER_SECONDS: '8',
      // Refunds waiting for Cielo's pause between voids, or whose void got no answer, are sent again by the janitor.
      JANITOR_SECONDS: '2',
      // The scheduler route's `now` ahead of the real clock is refused while a real provider holds records (422),
      // and SANDBOX_CLOCK_MOVES_REAL_RECORDS is refused with NODE_ENV=production: it moves only the sandbox's PIX
      // subscriptions, expiry and reserve releases, and bills the Cielo subscriptions' renewals early (by token, at the simulator).
      NODE_ENV: 'test',
      SANDBOX_CLOCK_MOVES_REAL_RECORDS: 'true',
      CARD_PROVIDER: cielo ? 'cielo' : 'sandbox',
      ...(cieloBoletos
        ? { BOLETO_PROVIDER: 'cielo', CIELO_BOLETO_PROVIDER: 'Simulado', CIELO_BOLETO_CLEARING_DAYS: '1', CIELO_BOLETO_POLL_SECONDS: '2', CIELO_NOTIFICATION_URL: notificationUrl }
        : {}),
    };
  }
  const serviceEnv = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    SESSION_SECRET: crypto.randomBytes(32).toString('hex'),
    RATE_LIMIT_RPS: '0',
    POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true',
    PROVIDER_RECOVERY_AFTER_SECONDS: String(RECOVERY_AFTER_SECONDS),
    // Short leases, so that what a killed process held is taken again within seconds, and a quick retry schedule.
    OUTBOX_POLL_MS: '200',
    OUTBOX_STALE_CLAIM_SECONDS: '5',
    QUEUE_LOCK_DURATION_MS: '3000',
    POSTBACK_RETRY_SCHEDULE_SECONDS: '1,2,3,5,8,13,21,34,55',
    LOG_LEVEL: env.CHAOS_LOG_LEVEL || 'warn',
    ...efiEnv,
    ...cieloEnv,
  };
  const service = serviceController(port, serviceEnv);
  const maintenance = await pgClient(maintenanceUrl.toString());
  let failures = [];
  let figures = {};
  let db = null;
  const restartMs = [];
  try {
    await service.start();
    const base = `http://127.0.0.1:${port}`;
    const state = { base, receiverUrl: receiver.url, launcher, cieloLauncher, sellers: [], stopping: false, down: false, startedAt: Date.now(), firstDriverError: null };
    if (efi) {
      // Efí refuses a send from a key without a webhook: the service registers it at boot.
      const deadline = Date.now() + 30_000;
      while (!(await launcher.state()).webhook) {
        if (Date.now() > deadline) throw new Error('the service did not register its webhook at the simulator within 30 s');
        await sleep(200);
      }
    }

    // Sellers, each with cashouts on, a withdrawal webhook, and money to cash out.
    for (let i = 0; i < settings.sellers; i += 1) {
      const admin = { 'x-admin-token': ADMIN_TOKEN };
      const document = efi ? { document: { type: 'cpf', number: cpfs[i] } } : {};
      const created = await call(base, 'POST', '/admin/sellers', { name: `Loja Chaos ${i}`, email: `chaos${i}-${Date.now()}@example.com`, permissions: { transferEnabled: true }, ...document }, admin);
      if (created.status !== 201) throw new Error(`seller not created: ${created.status} ${JSON.stringify(created.body)}`);
      const seller = { id: created.body.seller.id, keys: { 'x-api-public-key': created.body.credentials.publicKey, 'x-api-private-key': created.body.credentials.privateKey }, schedulerDays: 0, cpf: cpfs[i] };
      const hook = await call(base, 'POST', `/admin/sellers/${seller.id}/webhooks`, { url: `${receiver.url}/webhooks/${seller.id}`, type: 'WITHDRAWAL' }, admin);
      if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${JSON.stringify(hook.body)}`);
      // Transfers are not taken while Cielo holds the boleto rail: sandbox PIX then.
      const funding = await call(base, 'POST', '/api/sales', { ...saleBody(efi || cieloBoletos ? 'PIX' : 'TRANSFER'), amount: 50_000_000, items: [{ title: 'Aporte', unitPrice: 50_000_000, quantity: 1, tangible: false }], postbackUrl: `${receiver.url}/postbacks/${seller.id}` }, seller.keys);
      if (funding.status !== 201) throw new Error(`funding sale not created: ${funding.status} ${JSON.stringify(funding.body)}`);
      if (efi) {
        // Paid at the PSP, where the payouts leave from.
        const found = await call(base, 'GET', `/api/transactions/${funding.body.sale.id}`, undefined, seller.keys);
        const paid = await launcher.pay(funding.body.sale.externalTransactionId ?? found.body?.externalTransactionId);
        if (paid.status !== 200) throw new Error(`funding sale not paid at the PSP: ${paid.status} ${JSON.stringify(paid.body)}`);
        const deadline = Date.now() + 30_000;
        for (;;) {
          const balance = await call(base, 'GET', '/api/public/balance', undefined, seller.keys);
          if (balance.status === 200 && balance.body.available > 0) break;
          if (Date.now() > deadline) throw new Error(`funding sale paid at the PSP but not available within 30 s: ${JSON.stringify(balance.body)}`);
          await sleep(200);
        }
      } else {
        const confirmed = await call(base, 'POST', `/api/sandbox/sales/${funding.body.sale.id}/events`, { event: 'PAYMENT_CONFIRMED' }, seller.keys);
        if (confirmed.status !== 200) throw new Error(`funding sale not confirmed: ${confirmed.status}`);
      }
      state.sellers.push(seller);
    }

    // The load, and the chaos beside it.
    const loadStarted = Date.now();
    const workers = Array.from({ length: settings.concurrency }, () => worker(state));
    let terminator = null;
    let terminating = settings.pgTerminateEveryMs > 0;
    const terminatorLoop = async () => {
      while (terminating) {
        await sleep(jitter(settings.pgTerminateEveryMs));
        if (terminating && !state.down) await terminateBackends(maintenance, databaseName);
      }
    };
    if (terminating) terminator = terminatorLoop();
    for (let kill = 1; kill <= settings.kills; kill += 1) {
      await sleep(jitter(settings.killEveryMs));
      state.down = true;
      await service.kill();
      count('SIGKILLs');
      await sleep(Math.random() * 500); // clients meet a closed port for a moment
      restartMs.push(await service.start());
      state.down = false;
      process.stdout.write(`chaos: kill ${kill}/${settings.kills}, restarted in ${restartMs[restartMs.length - 1]} ms\n`);
    }
    await sleep(settings.tailMs);
    state.stopping = true;
    terminating = false;
    await Promise.all(workers);
    await terminator;
    const loadSeconds = (Date.now() - loadStarted) / 1000;
    if (state.firstDriverError) console.log(`chaos: first driver exception: ${state.firstDriverError}`);

    // Recovery: one clean restart, then the recovery job's delay, then the scheduler for every seller, then the outbox.
    await service.stop();
    await service.start();
    console.log(`chaos: load ran ${loadSeconds.toFixed(1)} s; clean restart done; waiting ${RECOVERY_AFTER_SECONDS + 2} s for the recovery delay`);
    await sleep((RECOVERY_AFTER_SECONDS + 2) * 1000);
    db = await pgClient(databaseUrl);
    const recoveryStarted = Date.now();
    let pending = -1;
    let stuck = -1;
    let cieloRefunds = 0;
    let boletosUnbooked = 0;
    // efi mode: no withdrawal open, no send EM_PROCESSAMENTO at the PSP, every Pix it received known to the service.
    let efiOpen = { withdrawals: 0, sends: 0, pixUnrecorded: 0 };
    while (Date.now() - recoveryStarted < settings.recoveryTimeoutMs) {
      for (const seller of state.sellers) {
        const run = await call(base, 'POST', '/api/sandbox/scheduler/run', {}, seller.keys);
        if (run.status !== 200) count('recovery scheduler runs failed');
        else count('recovery: charges recovered', run.body.recoveredCharges ?? 0);
      }
      [{ pending, stuck, cieloRefunds }] = (
        await db.query(`SELECT (SELECT count(*) FROM outbox_events WHERE status = 'PENDING')::int AS pending,
                               (SELECT count(*) FROM sales WHERE status = 'EM_PROCESSAMENTO')::int AS stuck,
                               (SELECT count(*) FROM sale_refunds r JOIN sales s ON s.id = r.sale_id WHERE r.status = 'PENDING' AND s.provider = 'cielo')::int AS "cieloRefunds"`)
      ).rows;
      if (efi) efiOpen = await efiOpenWork(db, launcher);
      if (cieloBoletos) boletosUnbooked = await cieloBoletosUnbooked(db, cieloLauncher);
      if (pending === 0 && stuck === 0 && cieloRefunds === 0 && boletosUnbooked === 0 && efiOpen.withdrawals === 0 && efiOpen.sends === 0 && efiOpen.pixUnrecorded === 0) break;
      await sleep(1000);
    }
    const recoverySeconds = (Date.now() - recoveryStarted) / 1000;
    const efiRecovery = efi ? `, withdrawals PENDING or PROCESSING ${efiOpen.withdrawals}, sends EM_PROCESSAMENTO at the PSP ${efiOpen.sends}, Pix received unknown to the service ${efiOpen.pixUnrecorded}` : '';
    console.log(`chaos: recovery took ${recoverySeconds.toFixed(1)} s (outbox PENDING ${pending}, sales EM_PROCESSAMENTO ${stuck}${cielo ? `, Cielo refunds PENDING ${cieloRefunds}` : ''}${cieloBoletos ? `, boletos paid at Cielo not booked ${boletosUnbooked}` : ''}${efiRecovery})`);
    await sleep(500); // the receiver's last answers
    await service.stop();

    console.log('\nchaos: the run');
    const sorted = [...restartMs].sort((a, b) => a - b);
    console.log(`  load ${loadSeconds.toFixed(1)} s, ${counts.SIGKILLs ?? 0} SIGKILLs (restart to /health/live: median ${sorted[Math.floor(sorted.length / 2)] ?? 0} ms, max ${sorted[sorted.length - 1] ?? 0} ms), ` +
      `${counts['pg_terminate_backend rounds'] ?? 0} pg_terminate_backend rounds killing ${counts['PostgreSQL backends terminated'] ?? 0} backends, ${service.lives()} service lives`);
    for (const key of Object.keys(counts).sort()) console.log(`  ${key}: ${counts[key]}`);

    ({ failures, figures } = await checks(db, databaseUrl, receiver, launcher, cieloLauncher));
    Object.assign(figures, {
      kills: counts.SIGKILLs ?? 0,
      backendsTerminated: counts['PostgreSQL backends terminated'] ?? 0,
      terminateRounds: counts['pg_terminate_backend rounds'] ?? 0,
      requests: counts.requests ?? 0,
      clientErrors: Object.entries(counts).filter(([key]) => /^client errors: [^ ]+$/.test(key) || key.startsWith('client errors: network')).reduce((sum, [, n]) => sum + n, 0),
      driverExceptions: Object.entries(counts).filter(([key]) => key.startsWith('driver exceptions')).reduce((sum, [, n]) => sum + n, 0),
      renewals: counts['scheduler: renewals'] ?? 0,
      loadSeconds: Math.round(loadSeconds),
      recoverySeconds: Math.round(recoverySeconds),
    });
  } finally {
    await service.stop().catch(() => undefined);
    if (launcher) await launcher.stop().catch(() => undefined);
    if (cieloLauncher) await cieloLauncher.stop().catch(() => undefined);
    await receiver.close();
    if (db) await db.end().catch(() => undefined);
    if (settings.keepDatabase) console.log(`chaos: kept database ${databaseName}`);
    else {
      await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
      await dropQueueKeys(databaseName);
    }
    await maintenance.end();
  }

  figures.failures = failures;
  console.log(`\nchaos-figures ${JSON.stringify(figures)}`);
  if (failures.length === 0) {
    const cards = cielo ? 'one POST and one payment per MerchantOrderId at most at Cielo, every paid Cielo sale captured once for its amount, no payment of a sale not paid' : 'one charge per reference at most';
    const payouts = efi ? 'one send per withdrawal at most at Efí, every completed withdrawal paid once for its net amount, none left open' : 'one payout per reference at most';
    const boletos = cieloBoletos ? ', every boleto paid at Cielo booked once (its sale PAGO, or owed back after its cancellation)' : '';
    console.log(`\nchaos: PASS: the ledger verifies to zero, no sale left in processing, ${cards}, ${payouts}${boletos}, every status change has its event, every event delivered and received`);
    return 0;
  }
  console.log('\nchaos: FAIL');
  for (const failure of failures) console.log(`  - ${failure}`);
  return 1;
}

/** The Bull keys of the dropped database (prefix bull:<database>, see app.module.ts). */
async function dropQueueKeys(databaseName) {
  const Redis = require('ioredis');
  const redis = new Redis(env.REDIS_URL || 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `bull:${databaseName}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } catch {
    // left for Redis' own eviction; harmless
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`chaos failed: ${error.stack}`);
    process.exit(2);
  },
);
