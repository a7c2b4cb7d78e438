'use strict';
/**
 * `npm run bench:billing`: N subscriptions due at once, one billing run through the real job code
 * (BillingService.runBilling(now, null), what the every-minute scheduler calls), for each N of
 * BENCH_BILLING_SIZES (default 10000,100000). Each size runs in its own process on its own fresh
 * database (created and dropped), from the production build. Prints renewals, seconds, renewals per
 * second and peak RSS, and writes bench/billing-results.json. BENCH_CPU_PROF a directory: each run's
 * billing (not its start-up or seeding) is profiled into it, for bench/profile-summary.js.
 *
 * Child mode (internal): node bench/billing.js --run N <database-url>
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { ADMIN_TOKEN, startServiceApp } = require('./service-app');
const { productionNodeFlags } = require('./production-node');

async function child(count, databaseUrl) {
  const { app, base } = await startServiceApp(databaseUrl);
  const { BillingService } = require('../dist/src/payments/billing.service');
  const { DataSource } = require('typeorm');
  const call = async (method, route, body, headers = {}) => {
    const response = await fetch(`${base}${route}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const created = await call('POST', '/admin/sellers', { name: 'Loja Assinaturas', email: 'assinaturas@bench.example.com' }, { 'x-admin-token': ADMIN_TOKEN });
  const keys = { 'x-api-public-key': created.credentials.publicKey, 'x-api-private-key': created.credentials.privateKey };
  const first = await call(
    'POST',
    '/api/sales',
    {
      amount: 2990,
      paymentMethod: 'CREDIT_CARD',
      customer: { name: 'Ana Souza', email: 'ana@example.com' },
      card: { number: '4111111111111111', holderName: 'ANA SOUZA', expirationMonth: '12', expirationYear: '2031', cvv: '123' },
      items: [{ title: 'Plano', unitPrice: 2990, quantity: 1, tangible: false }],
      subscription: { enabled: true, billingCycle: 'MONTHLY' },
    },
    keys,
  );
  // The subscriptions belong to BENCH_BILLING_SELLERS sellers (default 50): each renewal credits its
  // seller's balance under that row's lock, and one seller for all would make the run one queue.
  const sellerIds = [created.seller.id];
  for (let i = 1; i < Number(process.env.BENCH_BILLING_SELLERS || 50); i += 1) {
    sellerIds.push((await call('POST', '/admin/sellers', { name: `Loja ${i}`, email: `assinaturas${i}@bench.example.com` }, { 'x-admin-token': ADMIN_TOKEN })).seller.id);
  }
  const db = app.get(DataSource);
  // count - 1 more subscriptions like the first, due at the same instant, spread over the sellers.
  await db.query(
    `INSERT INTO subscriptions (provider, seller_id, status, billing_cycle, amount_cents, payment_method, card_token, card_last_four, card_brand,
                                customer_name, customer_email, product_id, product_name, trial_days, next_billing_date, started_at,
                                current_period, period_due_at, period_attempts, total_billings, successful_billings, last_payment_status)
     SELECT provider, ($3::int[])[1 + g % array_length($3::int[], 1)], status, billing_cycle, amount_cents, payment_method, card_token, card_last_four, card_brand,
            customer_name, customer_email, product_id, product_name, trial_days, next_billing_date, started_at,
            current_period, period_due_at, period_attempts, total_billings, successful_billings, last_payment_status
       FROM subscriptions, generate_series(1, $2) AS g WHERE id = $1`,
    [first.sale.subscription.id, count - 1, sellerIds],
  );
  await db.query('ANALYZE');
  const [{ due }] = await db.query('SELECT max(next_billing_date) AS due FROM subscriptions');
  const now = new Date(new Date(due).getTime() + 60_000);

  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  let peakHeap = 0;
  let peakExternal = 0;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapTotal);
    peakExternal = Math.max(peakExternal, usage.external + usage.arrayBuffers);
  }, 100);
  const profiler = process.env.BENCH_CPU_PROF ? await startProfiler() : null;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const summary = await app.get(BillingService).runBilling(now, null);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  if (profiler) await profiler.stop(path.join(path.resolve(process.env.BENCH_CPU_PROF), `billing-${count}-${process.pid}.cpuprofile`));
  const cpu = process.cpuUsage(cpuBefore);
  const [counts] = await db.query(
    `SELECT count(*)::int AS renewal_sales, count(*) FILTER (WHERE status = 'PAGO')::int AS paid FROM sales WHERE subscription_id IS NOT NULL AND billing_period = 1`,
  );
  await app.close();
  return {
    subscriptions: count,
    renewals: summary.renewals,
    renewalSales: counts.renewal_sales,
    paid: counts.paid,
    seconds: Math.round(seconds * 10) / 10,
    renewalsPerSecond: Math.round(summary.renewals / seconds),
    startRssMiB: Math.round(startRss / 1048576),
    peakRssMiB: Math.round(peakRss / 1048576),
    peakHeapTotalMiB: Math.round(peakHeap / 1048576),
    peakExternalMiB: Math.round(peakExternal / 1048576),
    serviceCpuMsPerRenewal: Math.round(((cpu.user + cpu.system) / 1000 / Math.max(summary.renewals, 1)) * 100) / 100,
  };
}

/** The V8 profiler of this process, started now: stop(file) writes what it sampled (the billing run alone, not start-up or seeding). */
async function startProfiler() {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await post('Profiler.stop');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

async function main() {
  const sizes = (process.env.BENCH_BILLING_SIZES || '10000,100000').split(',').map(Number);
  const { Client } = require('pg');
  console.log(`bench:billing: ${os.cpus().length} cores (${os.cpus()[0]?.model}), node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const results = [];
  for (const count of sizes) {
    const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/payment_gateway');
    url.pathname = `/payment_gateway_bench_billing_${Date.now()}_${process.pid}`;
    const databaseName = url.pathname.slice(1);
    try {
      const result = await new Promise((resolve, reject) => {
        const run = spawn(process.execPath, [...productionNodeFlags(), __filename, '--run', String(count), url.toString()], { stdio: ['ignore', 'pipe', 'inherit'] });
        let stdout = '';
        run.stdout.on('data', (chunk) => {
          stdout += chunk;
        });
        run.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout.trim().split('\n').pop())) : reject(new Error(`billing run of ${count} exited with ${code}`))));
      });
      results.push({ ...result, loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100) });
      console.log(
        `  ${String(count).padStart(7)} subscriptions: ${result.renewals} renewals (${result.paid} paid) in ${result.seconds} s = ${result.renewalsPerSecond} renewals/s, RSS ${result.startRssMiB} MiB before the run, peak ${result.peakRssMiB} MiB (V8 heap ${result.peakHeapTotalMiB}, buffers ${result.peakExternalMiB}), ${result.serviceCpuMsPerRenewal} ms of service CPU per renewal`,
      );
    } finally {
      const maintenance = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
      await maintenance.connect();
      await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
      await maintenance.end();
    }
  }
  if (results.length > 1) {
    const [small, large] = [results[0], results[results.length - 1]];
    console.log(`  cost per renewal: ${((small.seconds / small.renewals) * 1000).toFixed(2)} ms at ${small.subscriptions}, ${((large.seconds / large.renewals) * 1000).toFixed(2)} ms at ${large.subscriptions}`);
  }
  const file = process.env.BENCH_BILLING_OUTPUT || path.join(__dirname, 'billing-results.json');
  fs.writeFileSync(file, `${JSON.stringify({ machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version }, results }, null, 2)}\n`);
  console.log(`bench:billing: wrote ${path.relative(process.cwd(), file)}`);
}

if (process.argv[2] === '--run') {
  child(Number(process.argv[3]), process.argv[4]).then(
    (result) => {
      process.stdout.write(`\n${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  main().catch((error) => {
    console.error(`bench:billing failed: ${error.stack}`);
    process.exit(1);
  });
}
