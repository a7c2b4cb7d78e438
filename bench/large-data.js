'use strict';
/**
 * `npm run bench:large` (issue 24, reads that stay fast as data grows): one seller with BENCH_LARGE_ROWS
 * ledger postings (default 1,000,000, with their entries and balance) and as many events, and
 * BENCH_LARGE_SUBSCRIPTIONS subscriptions (default 100,000), written by generate_series
 * (test/e2e/setup/large-data.ts, the e2e test's own seed) into a fresh database (created and dropped),
 * then VACUUM ANALYZE, as autovacuum would leave them. The production build serves in its own process;
 * autocannon runs in another (bench/load.js) against each page, first and deep (90 % down, reached by
 * cursor): req/s, p50, p99 and errors, as a table and in bench/large-results.json.
 * Knobs: BENCH_LARGE_ROWS, BENCH_LARGE_SUBSCRIPTIONS, BENCH_DURATION (10 s), BENCH_WARMUP (2 s),
 * BENCH_CONNECTIONS (8).
 *
 * Server mode (internal): node bench/large-data.js --serve <database-url>
 */
const { execSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { ADMIN_TOKEN, startServiceApp } = require('./service-app');
const { startServer: startProductionServer } = require('./production-node');

/** The production build on a port; prints its URL, serves until killed. */
async function serve(databaseUrl) {
  const { base } = await startServiceApp(databaseUrl);
  process.stdout.write(`${JSON.stringify({ url: base })}\n`);
}

function startServer(databaseUrl) {
  return startProductionServer([__filename, '--serve', databaseUrl]);
}

/** One autocannon run in its own process (bench/load.js). */
function load(scenario) {
  return new Promise((resolve, reject) => {
    const run = spawn(process.execPath, [path.join(__dirname, 'load.js'), JSON.stringify(scenario)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    run.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    run.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`load exited with ${code}`))));
  });
}

async function main() {
  const rows = Number(process.env.BENCH_LARGE_ROWS || 1_000_000);
  const subscriptions = Number(process.env.BENCH_LARGE_SUBSCRIPTIONS || 100_000);
  const duration = Number(process.env.BENCH_DURATION || 10);
  const warmup = Number(process.env.BENCH_WARMUP || 2);
  const connections = Number(process.env.BENCH_CONNECTIONS || 8);
  const { Client } = require('pg');
  require('ts-node').register({ transpileOnly: true, project: path.join(__dirname, '..', 'tsconfig.json') });
  const { seedEvents, seedLedger, seedSubscriptions } = require('../test/e2e/setup/large-data');
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  console.log(
    `bench:large: ${os.hostname()}, ${os.cpus().length} cores (${os.cpus()[0]?.model}), node ${process.version}, commit ${commit}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );

  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/payment_gateway');
  url.pathname = `/payment_gateway_bench_large_${Date.now()}_${process.pid}`;
  const databaseName = url.pathname.slice(1);
  let server;
  const db = new Client({ connectionString: url.toString() });
  try {
    server = await startServer(url.toString());
    await db.connect();
    const created = await (
      await fetch(`${server.url}/admin/sellers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN_TOKEN },
        body: JSON.stringify({ name: 'Loja Grande', email: 'grande@bench.example.com' }),
      })
    ).json();
    const sellerId = created.seller.id;
    const keys = { publicKey: created.credentials.publicKey, privateKey: created.credentials.privateKey };

    let started = Date.now();
    const query = (sql, parameters) => db.query(sql, parameters);
    await db.query('BEGIN');
    await seedLedger(query, sellerId, rows);
    await seedEvents(query, sellerId, rows);
    await seedSubscriptions(query, sellerId, subscriptions);
    await db.query('COMMIT');
    const seededSeconds = (Date.now() - started) / 1000;
    started = Date.now();
    await db.query('VACUUM ANALYZE');
    console.log(`  seeded ${rows} postings, ${rows} events, ${subscriptions} subscriptions in ${seededSeconds.toFixed(0)} s; VACUUM ANALYZE ${((Date.now() - started) / 1000).toFixed(0)} s`);

    // Deep pages: the cursor of the row 90 % down, in each service's cursor form (opaque to clients), and
    // the id the page must then start with, checked below through the API.
    const depth = (count) => Math.floor(count * 0.9);
    const base64url = (value) => Buffer.from(value).toString('base64url');
    const [line] = (
      await db.query(
        `SELECT id, created_at::text AS at, lead(id) OVER (ORDER BY created_at DESC, id DESC) AS next FROM ledger_postings
          WHERE seller_id = $1 AND (available_delta_cents <> 0 OR blocked_delta_cents <> 0) ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [sellerId, depth(rows - Math.floor(rows / 10))], // one posting in ten (a payout sent) is not a line
      )
    ).rows;
    const [event] = (
      await db.query(`SELECT id, lead(event_id) OVER (ORDER BY id DESC) AS next FROM outbox_events WHERE seller_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1`, [sellerId, depth(rows)])
    ).rows;
    const [subscription] = (
      await db.query(`SELECT id, lead(id) OVER (ORDER BY id DESC) AS next FROM subscriptions WHERE seller_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1`, [sellerId, depth(subscriptions)])
    ).rows;
    const scenarios = [
      { name: 'statement, first page', path: '/api/public/balance/statement?limit=50' },
      { name: 'statement, deep page', path: `/api/public/balance/statement?limit=50&cursor=${base64url(JSON.stringify([line.at, Number(line.id)]))}`, first: Number(line.next), read: (b) => b.statement[0].id },
      { name: 'subscriptions, first page', path: '/api/subscriptions?limit=20' },
      {
        name: 'subscriptions, deep page',
        path: `/api/subscriptions?limit=20&cursor=${base64url(JSON.stringify([subscription.id, Math.floor(depth(subscriptions) / 20), subscriptions]))}`,
        first: subscription.next,
        read: (b) => b.data.subscriptions[0].id,
      },
      { name: 'events, first page', path: '/api/events?limit=20' },
      { name: 'events, deep page', path: `/api/events?limit=20&cursor=${base64url(String(event.id))}`, first: event.next, read: (b) => b.data.events[0].id },
    ];
    for (const scenario of scenarios) {
      const response = await fetch(`${server.url}${scenario.path}`, { headers: { 'x-api-public-key': keys.publicKey, 'x-api-private-key': keys.privateKey } });
      const body = await response.json();
      if (response.status !== 200) throw new Error(`${scenario.name}: ${response.status} ${JSON.stringify(body)}`);
      if (scenario.read && scenario.read(body) !== scenario.first) throw new Error(`${scenario.name}: starts at ${scenario.read(body)}, not ${scenario.first}`);
    }

    const results = [];
    for (const scenario of scenarios) {
      const run = { url: server.url, connections, method: 'GET', path: scenario.path, sellers: [{ ...keys, saleId: 0 }] };
      await load({ ...run, duration: warmup });
      const result = await load({ ...run, duration });
      const row = {
        scenario: scenario.name,
        requestsPerSecond: Math.round(result.requests.average),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        errors: result.errors + result.timeouts + result.non2xx,
      };
      results.push(row);
      console.log(`  ${row.scenario.padEnd(26)} ${String(row.requestsPerSecond).padStart(6)} req/s  p50 ${String(row.p50Ms).padStart(3)} ms  p99 ${String(row.p99Ms).padStart(3)} ms  errors ${row.errors}`);
    }
    const file = process.env.BENCH_LARGE_OUTPUT || path.join(__dirname, 'large-results.json');
    const machine = { host: os.hostname(), cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version };
    const settings = { rows, subscriptions, connections, durationSeconds: duration, warmupSeconds: warmup };
    fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), commit, machine, settings, results }, null, 2)}\n`);
    console.log(`bench:large: p99 target 20 ms: ${results.every((r) => r.p99Ms <= 20 && r.errors === 0) ? 'met on every page' : 'NOT met on every page'}; wrote ${path.relative(process.cwd(), file)}`);
  } finally {
    await db.end().catch(() => undefined);
    server?.process.removeAllListeners('exit');
    server?.process.kill('SIGTERM');
    const maintenance = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
    await maintenance.connect();
    await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await maintenance.end();
  }
}

if (process.argv[2] === '--serve') {
  serve(process.argv[3]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(`bench:large failed: ${error.stack}`);
    process.exit(1);
  });
}
