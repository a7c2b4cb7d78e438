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
 *   DATABASE_URL              its server is used; the database is chaos-owned, created and dropped
 *   REDIS_URL                 Redis [redis://127.0.0.1:6379]
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
};
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
  [1, 'debit card sale', (state, seller) => createSale(state, seller, saleBody('DEBIT_CARD', { card: card(pick(GOOD_CARDS)) }), 'debit card sale')],
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
const TOTAL_WEIGHT = SCENARIOS.reduce((sum, [weight]) => sum + weight, 0);

function pickScenario() {
  let roll = Math.random() * TOTAL_WEIGHT;
  for (const scenario of SCENARIOS) {
    roll -= scenario[0];
    if (roll < 0) return scenario;
  }
  return SCENARIOS[0];
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

async function checks(db, databaseUrl, receiver) {
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

  // The sandbox acquirer: one charge per reference (its primary key), each for a card sale.
  const [charges] = await q(`SELECT count(*)::int AS n, count(*) FILTER (WHERE outcome = 'APPROVED')::int AS approved, count(*) FILTER (WHERE outcome = 'VOIDED')::int AS voided,
                                    count(*) FILTER (WHERE refunded_at IS NOT NULL)::int AS refunded FROM sandbox_card_charges`);
  const [duplicateCharges] = await q(`SELECT count(*)::int AS n FROM (SELECT reference FROM sandbox_card_charges GROUP BY reference HAVING count(*) > 1) d`);
  const [orphanCharges] = await q(`SELECT count(*)::int AS n FROM sandbox_card_charges c LEFT JOIN sales s ON s.id::text = c.reference WHERE s.id IS NULL OR s.payment_method NOT IN ('CREDIT_CARD', 'DEBIT_CARD')`);
  const [paidWithoutCharge] = await q(`SELECT count(*)::int AS n FROM sales s LEFT JOIN sandbox_card_charges c ON c.reference = s.id::text AND c.outcome = 'APPROVED'
                                       WHERE s.payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') AND s.status IN ('PAGO', 'ESTORNADO', 'CHARGEBACK') AND c.reference IS NULL`);
  const [chargedButUnpaid] = await q(`SELECT count(*)::int AS n FROM sales s JOIN sandbox_card_charges c ON c.reference = s.id::text AND c.outcome = 'APPROVED'
                                      WHERE s.status NOT IN ('PAGO', 'ESTORNADO', 'CHARGEBACK')`);
  console.log(`\nchaos: sandbox acquirer: ${charges.n} charge records (${charges.approved} approved, ${charges.voided} voided, ${charges.refunded} refunded by the acquirer); references with more than one: ${duplicateCharges.n}; without a card sale: ${orphanCharges.n}; paid card sales without an approved charge: ${paidWithoutCharge.n}; approved charges of a sale not paid: ${chargedButUnpaid.n}`);
  Object.assign(figures, { chargeRecords: charges.n, chargeReferencesDuplicated: duplicateCharges.n, chargesWithoutSale: orphanCharges.n, paidCardSalesWithoutCharge: paidWithoutCharge.n, approvedChargesOfUnpaidSales: chargedButUnpaid.n });
  if (duplicateCharges.n) fail(`${duplicateCharges.n} charge references recorded more than once`);
  if (orphanCharges.n) fail(`${orphanCharges.n} sandbox charges without a card sale`);
  if (paidWithoutCharge.n) fail(`${paidWithoutCharge.n} paid card sales without an approved charge`);
  if (chargedButUnpaid.n) fail(`${chargedButUnpaid.n} approved charges whose sale is not paid (money taken from the customer, not credited)`);

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

  // Every status change produced its event: the outbox's postbacks of each sale against its status history.
  const [saleEvents] = await q(`
    WITH changes AS (
      SELECT c.sale_id, coalesce(c.previous_status, '-') || '>' || c.status AS move, count(*) AS n
        FROM sale_status_changes c JOIN sales s ON s.id = c.sale_id
       WHERE s.postback_url IS NOT NULL AND NOT (${ANSWERED_CREATION}) GROUP BY 1, 2),
    events AS (
      SELECT substring(aggregate_key FROM 6)::int AS sale_id, coalesce(payload->>'previousStatus', '-') || '>' || (payload->>'status') AS move, count(*) AS n
        FROM outbox_events WHERE channel = 'SALE_POSTBACK' GROUP BY 1, 2)
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
  await prepareDatabase(databaseUrl);

  const receiver = await startReceiver();
  const port = await freePort();
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
    const state = { base, receiverUrl: receiver.url, sellers: [], stopping: false, down: false, startedAt: Date.now(), firstDriverError: null };

    // Sellers, each with cashouts on, a withdrawal webhook, and money to cash out.
    for (let i = 0; i < settings.sellers; i += 1) {
      const admin = { 'x-admin-token': ADMIN_TOKEN };
      const created = await call(base, 'POST', '/admin/sellers', { name: `Loja Chaos ${i}`, email: `chaos${i}-${Date.now()}@example.com`, permissions: { transferEnabled: true } }, admin);
      if (created.status !== 201) throw new Error(`seller not created: ${created.status} ${JSON.stringify(created.body)}`);
      const seller = { id: created.body.seller.id, keys: { 'x-api-public-key': created.body.credentials.publicKey, 'x-api-private-key': created.body.credentials.privateKey }, schedulerDays: 0 };
      const hook = await call(base, 'POST', `/admin/sellers/${seller.id}/webhooks`, { url: `${receiver.url}/webhooks/${seller.id}`, type: 'WITHDRAWAL' }, admin);
      if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${JSON.stringify(hook.body)}`);
      const funding = await call(base, 'POST', '/api/sales', { ...saleBody('TRANSFER'), amount: 50_000_000, items: [{ title: 'Aporte', unitPrice: 50_000_000, quantity: 1, tangible: false }], postbackUrl: `${receiver.url}/postbacks/${seller.id}` }, seller.keys);
      if (funding.status !== 201) throw new Error(`funding sale not created: ${funding.status} ${JSON.stringify(funding.body)}`);
      const confirmed = await call(base, 'POST', `/api/sandbox/sales/${funding.body.sale.id}/events`, { event: 'PAYMENT_CONFIRMED' }, seller.keys);
      if (confirmed.status !== 200) throw new Error(`funding sale not confirmed: ${confirmed.status}`);
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
    while (Date.now() - recoveryStarted < settings.recoveryTimeoutMs) {
      for (const seller of state.sellers) {
        const run = await call(base, 'POST', '/api/sandbox/scheduler/run', {}, seller.keys);
        if (run.status !== 200) count('recovery scheduler runs failed');
        else count('recovery: charges recovered', run.body.recoveredCharges ?? 0);
      }
      [{ pending, stuck }] = (
        await db.query(`SELECT (SELECT count(*) FROM outbox_events WHERE status = 'PENDING')::int AS pending,
                               (SELECT count(*) FROM sales WHERE status = 'EM_PROCESSAMENTO')::int AS stuck`)
      ).rows;
      if (pending === 0 && stuck === 0) break;
      await sleep(1000);
    }
    const recoverySeconds = (Date.now() - recoveryStarted) / 1000;
    console.log(`chaos: recovery took ${recoverySeconds.toFixed(1)} s (outbox PENDING ${pending}, sales EM_PROCESSAMENTO ${stuck})`);
    await sleep(500); // the receiver's last answers
    await service.stop();

    console.log('\nchaos: the run');
    const sorted = [...restartMs].sort((a, b) => a - b);
    console.log(`  load ${loadSeconds.toFixed(1)} s, ${counts.SIGKILLs ?? 0} SIGKILLs (restart to /health/live: median ${sorted[Math.floor(sorted.length / 2)] ?? 0} ms, max ${sorted[sorted.length - 1] ?? 0} ms), ` +
      `${counts['pg_terminate_backend rounds'] ?? 0} pg_terminate_backend rounds killing ${counts['PostgreSQL backends terminated'] ?? 0} backends, ${service.lives()} service lives`);
    for (const key of Object.keys(counts).sort()) console.log(`  ${key}: ${counts[key]}`);

    ({ failures, figures } = await checks(db, databaseUrl, receiver));
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
    console.log('\nchaos: PASS: the ledger verifies to zero, no sale left in processing, one charge and one payout per reference at most, every status change has its event, every event delivered and received');
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
