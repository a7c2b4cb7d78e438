'use strict';
/**
 * `npm run bench:hostile` (issue 35, M3, L2, L3): what a few hostile requests cost the production build,
 * served in its own process on 127.0.0.1 against a fresh database (created and dropped). Timings to read,
 * not a test: nothing here passes or fails.
 *   (a) many keys: an authenticated flat JSON object of 60,000 keys (about 880 KB) on
 *       POST /api/sales/{id}/refunds and POST /api/sales: time to answer, and the answer's status.
 *   (b) slow headers: 40 connections each sending 1,000,000 bytes of one header (then 12,000, under every
 *       limit), then one byte a second, never finishing: the server's RSS growth (peak over before), the
 *       answers, and how long it holds them (the bench stops waiting at 90 s).
 *   (c) big anonymous bodies: 10 clients sending 1 MB JSON bodies without keys, back to back, for 10 s,
 *       while GET /health/live is timed every 50 ms: its p50, p99 and max, beside the same probe idle.
 * Knobs: BENCH_HOSTILE_DIST (a build directory to start instead of dist/, e.g. an older commit's, with
 * node_modules reachable from it), BENCH_HOSTILE_HOLD_MAX_S (90), BENCH_HOSTILE_PARTS (a,b,c),
 * BENCH_HOSTILE_OUTPUT (a file for the figures as JSON).
 *
 * Server mode (internal): node bench/hostile-requests.js --serve <database-url> <dist-dir>
 */
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const { ADMIN_TOKEN, startServiceApp } = require('./service-app');
const { startServer: startProductionServer } = require('./production-node');

const DIST = path.resolve(process.env.BENCH_HOSTILE_DIST || path.join(__dirname, '..', 'dist'));
const HOLD_MAX_MS = Number(process.env.BENCH_HOSTILE_HOLD_MAX_S || 90) * 1000;
const PARTS = new Set((process.env.BENCH_HOSTILE_PARTS || 'a,b,c').split(','));

async function serve(databaseUrl, distDir) {
  const { base } = await startServiceApp(databaseUrl, distDir);
  process.stdout.write(`${JSON.stringify({ url: base })}\n`);
}

function startServer(databaseUrl) {
  return startProductionServer([__filename, '--serve', databaseUrl, DIST]);
}

/** The server process's resident set, in MiB (Linux /proc). */
function rssMiB(pid) {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line)[1]) / 1024;
}

/** One request with a prebuilt body; resolves with its status and milliseconds to the end of the answer. */
function timed(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const request = http.request(url, { method, headers: body ? { ...headers, 'content-length': body.length } : headers, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    request.on('error', (error) => resolve({ status: 0, ms: Number(process.hrtime.bigint() - started) / 1e6, error: error.code }));
    request.end(body);
  });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const ms = (value) => `${value.toFixed(0)} ms`;
const sleep = (delay) => new Promise((resolve) => setTimeout(resolve, delay));

/** (a) A 60,000-key body on the refunds route and on POST /api/sales, three times each. */
async function manyKeys(base, keys) {
  const auth = { 'x-api-public-key': keys.publicKey, 'x-api-private-key': keys.privateKey, 'content-type': 'application/json' };
  const sale = await (
    await fetch(`${base}/api/sales`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        amount: 10000,
        paymentMethod: 'CREDIT_CARD',
        customer: { name: 'João da Silva', email: 'joao@example.com', document: { type: 'cpf', number: '52998224725' }, phone: '11987654321' },
        items: [{ title: 'Curso online', unitPrice: 10000, quantity: 1, tangible: false }],
        card: { number: '4111111111111111', holderName: 'JOAO DA SILVA', expirationMonth: '12', expirationYear: '2035', cvv: '123' },
      }),
    })
  ).json();
  if (!sale.sale?.id) throw new Error(`the card sale was not created: ${JSON.stringify(sale)}`);
  const body = Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]))));
  const rows = [];
  for (const [name, route] of [
    ['POST /api/sales/{id}/refunds', `/api/sales/${sale.sale.id}/refunds`],
    ['POST /api/sales', '/api/sales'],
  ]) {
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await timed(`${base}${route}`, { method: 'POST', headers: auth, body }));
    rows.push({ route: name, bodyKB: Math.round(body.length / 1024), statuses: [...new Set(answers.map((a) => a.status))], medianMs: percentile(answers.map((a) => a.ms), 50), maxMs: Math.max(...answers.map((a) => a.ms)) });
  }
  return rows;
}

/** (b) 40 connections each sending `bytes` of one header, then a byte a second, never ending it. */
async function slowHeaders(url, pid, bytes) {
  const { port } = new URL(url);
  const before = rssMiB(pid);
  let peak = before;
  const started = Date.now();
  const closedAt = [];
  const chunk = `${'a'.repeat(64 * 1024 - 1)}b`;
  const sockets = Array.from({ length: 40 }, () => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const state = { socket, closed: false, status: null };
    socket.on('data', (data) => (state.status ??= Number(/^HTTP\/1\.1 (\d+)/.exec(data.toString('latin1'))?.[1] ?? 0)));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      state.closed = true;
      closedAt.push(Date.now() - started);
    });
    socket.on('connect', async () => {
      socket.write('GET /health/live HTTP/1.1\r\nHost: bench\r\nX-Filler: ');
      // 1,000,000 bytes stay under a 1 MiB limit with the request line, so that only a narrower one refuses them.
      for (let sent = 0; sent < bytes && !state.closed; sent += chunk.length) {
        socket.write(chunk.slice(0, bytes - sent));
        await sleep(20);
      }
      while (!state.closed && Date.now() - started < HOLD_MAX_MS) {
        socket.write('a');
        await sleep(1000);
      }
    });
    return state;
  });
  while (sockets.some((s) => !s.closed) && Date.now() - started < HOLD_MAX_MS) {
    peak = Math.max(peak, rssMiB(pid));
    await sleep(200);
  }
  const held = sockets.filter((s) => !s.closed).length;
  for (const s of sockets) s.socket.destroy();
  const statuses = {};
  for (const s of sockets) statuses[s.status ?? 'none'] = (statuses[s.status ?? 'none'] ?? 0) + 1;
  return {
    rssBeforeMiB: Math.round(before),
    rssPeakMiB: Math.round(peak),
    rssGrowthMiB: Math.round(peak - before),
    lastClosedAfterS: closedAt.length ? Math.max(...closedAt) / 1000 : null,
    stillHeldAtStopS: held > 0 ? { connections: held, atS: HOLD_MAX_MS / 1000 } : null,
    answers: statuses,
  };
}

/** GET /health/live every 50 ms for `durationMs`: its latencies. */
async function probeHealth(base, durationMs) {
  const latencies = [];
  const until = Date.now() + durationMs;
  while (Date.now() < until) {
    latencies.push((await timed(`${base}/health/live`)).ms);
    await sleep(50);
  }
  return { probes: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: Math.max(...latencies) };
}

/** (c) 10 clients sending 1 MB bodies without keys, back to back, while /health/live is probed. */
async function bigAnonymousBodies(base) {
  const idle = await probeHealth(base, 3000);
  const body = Buffer.from(JSON.stringify({ items: Array.from({ length: 100_000 }, () => 'x'.repeat(7)) }).padEnd(1_000_000, ' '));
  let stop = false;
  const statuses = {};
  let sent = 0;
  const clients = Array.from({ length: 10 }, async () => {
    while (!stop) {
      const answer = await timed(`${base}/api/sales`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      sent += 1;
    }
  });
  const loaded = await probeHealth(base, 10_000);
  stop = true;
  await Promise.all(clients);
  return { bodyKB: Math.round(body.length / 1024), bodiesSent: sent, answers: statuses, healthIdle: idle, healthUnderLoad: loaded };
}

async function main() {
  const { Client } = require('pg');
  const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  console.log(
    `bench:hostile: ${os.hostname()}, ${os.cpus().length} cores, node ${process.version}, commit ${commit}, build ${path.relative(process.cwd(), DIST) || '.'}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  );
  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/payment_gateway');
  url.pathname = `/payment_gateway_bench_hostile_${Date.now()}_${process.pid}`;
  const databaseName = url.pathname.slice(1);
  let server;
  try {
    server = await startServer(url.toString());
    const created = await (
      await fetch(`${server.url}/admin/sellers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': ADMIN_TOKEN },
        body: JSON.stringify({ name: 'Loja Hostil', email: 'hostil@bench.example.com' }),
      })
    ).json();
    const keys = created.credentials;

    let a = null;
    let b = null;
    let c = null;
    if (PARTS.has('a')) {
      a = await manyKeys(server.url, keys);
      console.log('(a) 60,000-key body, authenticated:');
      for (const row of a) console.log(`  ${row.route.padEnd(30)} ${row.bodyKB} KB  status ${row.statuses.join('/')}  median ${ms(row.medianMs)}  max ${ms(row.maxMs)}`);
    }
    if (PARTS.has('c')) {
      c = await bigAnonymousBodies(server.url);
      console.log(`(c) 10 clients sending ${c.bodyKB} KB bodies without keys for 10 s (${c.bodiesSent} sent, answers ${JSON.stringify(c.answers)}):`);
      console.log(`  /health/live idle        p50 ${ms(c.healthIdle.p50Ms)}  p99 ${ms(c.healthIdle.p99Ms)}  max ${ms(c.healthIdle.maxMs)}`);
      console.log(`  /health/live under load  p50 ${ms(c.healthUnderLoad.p50Ms)}  p99 ${ms(c.healthUnderLoad.p99Ms)}  max ${ms(c.healthUnderLoad.maxMs)}`);
    }
    if (PARTS.has('b')) {
      await sleep(2000);
      b = {};
      // The large header shows the parser's limit; the small one (under every limit) the headers timeout.
      for (const bytes of [1_000_000, 12_000]) {
        const run = (b[bytes] = await slowHeaders(server.url, server.process.pid, bytes));
        console.log(`(b) 40 slow connections, ${bytes.toLocaleString('en')}-byte unfinished header each:`);
        console.log(`  server RSS ${run.rssBeforeMiB} → peak ${run.rssPeakMiB} MiB (+${run.rssGrowthMiB}); answers ${JSON.stringify(run.answers)}`);
        console.log(`  ${run.stillHeldAtStopS ? `${run.stillHeldAtStopS.connections} still held when the bench stopped at ${run.stillHeldAtStopS.atS} s` : `all closed by the server within ${run.lastClosedAfterS?.toFixed(1)} s`}`);
        await sleep(2000);
      }
    }

    const file = process.env.BENCH_HOSTILE_OUTPUT;
    if (file) fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), commit, build: DIST, manyKeys: a, slowHeaders: b, bigAnonymousBodies: c }, null, 2)}\n`);
  } finally {
    server?.process.removeAllListeners('exit');
    server?.process.kill('SIGTERM');
    await sleep(500);
    const maintenance = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
    await maintenance.connect();
    await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await maintenance.end();
  }
}

if (process.argv[2] === '--serve') {
  serve(process.argv[3], process.argv[4]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(`bench:hostile failed: ${error.stack}`);
    process.exit(1);
  });
}
