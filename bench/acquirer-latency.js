'use strict';
/**
 * `npm run bench:acquirer` (issue 39): card sales under a real acquirer's latency. The Cielo simulator
 * (test/e2e/setup/cielo/chaos-launcher.ts, in a process of its own, faults off) answers every POST /1/sales
 * after BENCH_ACQUIRER_LATENCY_MS; BENCH_IN_FLIGHT credit card sales (an approving test card, spread over
 * the seeded sellers) are sent to POST /api/sales all at once, each on its own connection (kept from one
 * wave to the next, as a load balancer's), and every answer is awaited before the next wave. The service's
 * production build runs with CARD_PROVIDER=cielo and its defaults (the pool of 20, CIELO_MAX_SOCKETS), the
 * rate limit off; then the lean baseline (bench/baseline.js, the same POST /1/sales between its two
 * statements) the same way, on the same database, so the figure shows what the design costs. Both inherit
 * this environment (CIELO_MAX_SOCKETS=64 shows what the cap does).
 *
 * For each side and wave: sales completed (answered at all), answered 201, 503 and any other status, p50,
 * p99 and max latency (each from its own request's start), the server's peak RSS (read from /proc every
 * 100 ms by run.js's `measure`) and the CPU per sale of the server, PostgreSQL's backends, the simulator and
 * this process (the load). For each side: the sales' statuses in the database (all PAGO expected), the
 * POST /1/sales the simulator received for them (one per sale: no double charge) and its schema violations.
 * Then `ledger:verify` on the bench database, over both sides' postings. Target (issue 39), on the service:
 * every sale completes, none 503, p99 ≤ the latency + 300 ms, peak RSS < 250 MiB. Writes
 * bench/acquirer-results.json.
 *
 * Env (defaults in brackets): BENCH_ACQUIRER_LATENCY_MS [800], BENCH_IN_FLIGHT sales per wave [500],
 * BENCH_WAVES [3], BENCH_WARMUP_SALES sent at once before the first wave, not counted [50],
 * BENCH_WAVE_PAUSE_MS between waves [2000], BENCH_SELLERS [8], BENCH_SIDES [service,baseline],
 * BENCH_CPU_PROF a directory: the service runs with node --cpu-prof and writes its profile there (each
 * wave's span on the profile's clock is in the results, `monotonicWindowUs`), BENCH_SERVICE_PORT [3111],
 * BENCH_BASELINE_PORT [3112], BENCH_OUTPUT [bench/acquirer-results.json], DATABASE_URL (its server; the
 * database is bench-owned, created and dropped), REDIS_URL.
 */
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { SCENARIOS, benchDatabase, serviceEnvironment, startService, startProcess, waitForHttp, seed, measure, startCieloSimulator, verifyLedger } = require('./run');

const env = process.env;
const settings = {
  latencyMs: Number(env.BENCH_ACQUIRER_LATENCY_MS || 800),
  inFlight: Number(env.BENCH_IN_FLIGHT || 500),
  waves: Number(env.BENCH_WAVES || 3),
  warmupSales: Number(env.BENCH_WARMUP_SALES ?? 50),
  wavePauseMs: Number(env.BENCH_WAVE_PAUSE_MS || 2000),
  sellers: Number(env.BENCH_SELLERS || 8),
  sides: (env.BENCH_SIDES || 'service,baseline').split(',').map((s) => s.trim()).filter(Boolean),
  cpuProfileDir: env.BENCH_CPU_PROF ? path.resolve(env.BENCH_CPU_PROF) : null,
};
const SERVICE_PORT = Number(env.BENCH_SERVICE_PORT || 3111);
const BASELINE_PORT = Number(env.BENCH_BASELINE_PORT || 3112);
/** The target's margin over the acquirer's latency (issue 39). */
const P99_MARGIN_MS = 300;
const RSS_LIMIT_MIB = 250;
/** Longest wait for one answer before it counts as not completed. */
const REQUEST_TIMEOUT_MS = 60_000;
/** A card ending in 1: the simulator approves it (Cielo's sandbox table); every sale should end PAGO. */
const SALE = JSON.stringify(SCENARIOS.card.body);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const MiB = (bytes) => Math.round(bytes / 1048576);

/** VmRSS of a process in bytes (0 once it is gone). */
function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One POST /api/sales: its status, latency from its own start, and the sale's id and status when answered. */
function postSale(agent, port, seller) {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const done = (result) => resolve({ ...result, latencyMs: Number(process.hrtime.bigint() - started) / 1e6 });
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/sales',
        agent,
        timeout: REQUEST_TIMEOUT_MS,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(SALE), 'x-api-public-key': seller.publicKey, 'x-api-private-key': seller.privateKey },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', (error) => done({ status: null, error: error.message }));
        response.on('end', () => {
          let sale = null;
          try {
            sale = JSON.parse(Buffer.concat(chunks).toString('utf8')).sale ?? null;
          } catch {
            // not JSON: its status tells enough
          }
          done({ status: response.statusCode, saleId: sale?.id ?? null, saleStatus: sale?.status ?? null });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on('error', (error) => done({ status: null, error: error.message }));
    request.end(SALE);
  });
}

/**
 * `count` sales at once, spread over the sellers. Meanwhile (run.js's `measure`, every 100 ms): the server's
 * RSS, and the CPU of each part: the server, PostgreSQL's backends of the bench database, the simulator, and
 * this process (the load).
 */
async function wave(target, sellers, count, context) {
  const rssBefore = rssOf(target.pid);
  const started = Date.now();
  const monotonicStart = process.hrtime.bigint();
  const measured = await measure(
    target.pid,
    context.databaseName,
    { pid: process.pid },
    () => Promise.all(Array.from({ length: count }, (_, i) => postSale(target.agent, target.port, sellers[i % sellers.length]))),
    { intervalMs: 100, parts: { simulator: context.simulatorPid } },
  );
  const seconds = (Date.now() - started) / 1000;
  // The wave's span on the monotonic clock in µs, the clock of a --cpu-prof profile's samples.
  const window = [Number(monotonicStart / 1000n), Number(process.hrtime.bigint() / 1000n)];
  return { answers: measured.result, seconds, rssBefore, rssAfter: rssOf(target.pid), peakRss: measured.peakRss, cores: measured.cores, window };
}

function summarize(measured, count) {
  const { answers } = measured;
  const statuses = {};
  for (const answer of answers) statuses[answer.status ?? 'no answer'] = (statuses[answer.status ?? 'no answer'] ?? 0) + 1;
  const saleStatuses = {};
  for (const answer of answers) if (answer.saleStatus) saleStatuses[answer.saleStatus] = (saleStatuses[answer.saleStatus] ?? 0) + 1;
  const latencies = answers.filter((a) => a.status !== null).map((a) => a.latencyMs).sort((a, b) => a - b);
  const round = (value) => (value === null ? null : Math.round(value));
  return {
    inFlight: count,
    completed: latencies.length,
    answered201: statuses['201'] ?? 0,
    answered503: statuses['503'] ?? 0,
    statuses,
    answeredSaleStatuses: saleStatuses,
    errors: [...new Set(answers.filter((a) => a.error).map((a) => a.error))].slice(0, 5),
    latencyMs: { p50: round(percentile(latencies, 50)), p90: round(percentile(latencies, 90)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? null) },
    seconds: Math.round(measured.seconds * 100) / 100,
    peakRssMiB: MiB(measured.peakRss),
    rssBeforeMiB: MiB(measured.rssBefore),
    rssAfterMiB: MiB(measured.rssAfter),
    // Cores each part used over the wave, and its CPU per sale in ms (load: this process, sending and sampling).
    cores: Object.fromEntries(Object.entries(measured.cores).map(([part, cores]) => [part, Math.round(cores * 100) / 100])),
    cpuMsPerSale: Object.fromEntries(Object.entries(measured.cores).map(([part, cores]) => [part, Math.round(((cores * measured.seconds * 1000) / count) * 100) / 100])),
    ...(settings.cpuProfileDir ? { monotonicWindowUs: measured.window } : {}),
  };
}

async function simulatorState(controlUrl) {
  const response = await fetch(`${controlUrl}/state`);
  if (!response.ok) throw new Error(`the simulator's GET /state answered ${response.status}`);
  return response.json();
}

/** One side: the warm-up, then the waves; the sales' statuses in the database and their POSTs at the simulator. */
async function runSide(side, port, pid, sellers, context) {
  // Connections kept between waves (a load balancer's keep-alive), so that every wave starts alike.
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: Infinity });
  const target = { agent, port, pid };
  const rssAtStart = rssOf(pid);
  if (settings.warmupSales > 0) {
    const warm = summarize(await wave(target, sellers, settings.warmupSales, context), settings.warmupSales);
    console.log(`  ${side.padEnd(8)} warm-up  ${settings.warmupSales} at once: ${warm.answered201} answered 201, p99 ${warm.latencyMs.p99} ms (not counted)`);
    await sleep(settings.wavePauseMs);
  }
  const waves = [];
  const saleIds = [];
  for (let i = 0; i < settings.waves; i += 1) {
    const measured = await wave(target, sellers, settings.inFlight, context);
    const row = { wave: i + 1, ...summarize(measured, settings.inFlight), loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100) };
    saleIds.push(...measured.answers.map((a) => a.saleId).filter((id) => id !== null));
    waves.push(row);
    console.log(
      `  ${side.padEnd(8)} wave ${row.wave}   ${row.inFlight} at once: completed ${row.completed}, 201 ${row.answered201}, 503 ${row.answered503}, ` +
        `statuses ${JSON.stringify(row.statuses)}, p50 ${row.latencyMs.p50} / p99 ${row.latencyMs.p99} / max ${row.latencyMs.max} ms, ` +
        `in ${row.seconds} s, rss ${row.rssBeforeMiB} → peak ${row.peakRssMiB} → ${row.rssAfterMiB} MiB, ` +
        `CPU ms/sale ${Object.entries(row.cpuMsPerSale).map(([part, ms]) => `${part} ${ms}`).join(' ')}`,
    );
    if (i + 1 < settings.waves) await sleep(settings.wavePauseMs);
  }
  agent.destroy();

  // Every sale answered, as the database holds it now, and the POST /1/sales the simulator received for it.
  const database = new Client({ connectionString: context.databaseUrl });
  await database.connect();
  const { rows } = await database.query('SELECT status, provider, count(*)::int AS sales FROM sales WHERE id = ANY($1::bigint[]) GROUP BY status, provider ORDER BY status', [saleIds]);
  await database.end();
  const state = await simulatorState(context.controlUrl);
  const posts = saleIds.map((id) => state.postsByOrderId[`${env.CIELO_ORDER_ID_PREFIX || 'GW'}${id}`] ?? 0);
  const totals = {
    sales: settings.inFlight * settings.waves,
    completed: waves.reduce((n, w) => n + w.completed, 0),
    answered201: waves.reduce((n, w) => n + w.answered201, 0),
    answered503: waves.reduce((n, w) => n + w.answered503, 0),
    p50Ms: Math.max(...waves.map((w) => w.latencyMs.p50 ?? Infinity)),
    p99Ms: Math.max(...waves.map((w) => w.latencyMs.p99 ?? Infinity)),
    maxMs: Math.max(...waves.map((w) => w.latencyMs.max ?? Infinity)),
    peakRssMiB: Math.max(...waves.map((w) => w.peakRssMiB)),
    rssAtStartMiB: MiB(rssAtStart),
    rssAtEndMiB: MiB(rssOf(pid)),
  };
  return {
    side,
    waves,
    totals,
    databaseStatuses: rows,
    cieloPosts: { sales: saleIds.length, posts: posts.reduce((n, p) => n + p, 0), withoutPost: posts.filter((p) => p === 0).length, postedTwiceOrMore: posts.filter((p) => p > 1).length },
    simulatorViolations: state.violations,
  };
}

async function main() {
  const started = new Date();
  const database = benchDatabase();
  console.log(`bench:acquirer: ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    `bench:acquirer: Cielo answers each sale in ${settings.latencyMs} ms; ${settings.waves} wave(s) of ${settings.inFlight} card sales at once (after ${settings.warmupSales} not counted), ` +
      `${settings.sellers} sellers, sides ${settings.sides.join(', ')}, database ${database.name}`,
  );
  await database.create();
  const cielo = await startCieloSimulator({ CHAOS_CIELO_LATENCY_MS: String(settings.latencyMs) });
  process.on('exit', () => cielo.child.kill('SIGKILL'));
  const serviceEnv = serviceEnvironment(database.url, SERVICE_PORT, cielo.env);
  const profileArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`, '-r', path.join(__dirname, 'exit-on-signal.js')] : [];
  const service = startService(serviceEnv, { nodeArgs: profileArgs });
  const baseline = startProcess('baseline', [path.join(__dirname, 'baseline.js')], { PORT: String(BASELINE_PORT), DATABASE_URL: database.url, ...cielo.env });
  const sides = [];
  let ledgerVerify = null;
  try {
    const serviceBase = `http://127.0.0.1:${SERVICE_PORT}`;
    await waitForHttp(`${serviceBase}/health/live`, service);
    await waitForHttp(`http://127.0.0.1:${BASELINE_PORT}/health/live`, baseline);
    const sellers = await seed(serviceBase, settings.sellers);
    console.log(`bench:acquirer: seeded ${sellers.length} sellers; the simulator's CIELO_* at ${cielo.env.CIELO_API_URL}`);
    const targets = { service: { port: SERVICE_PORT, pid: service.pid }, baseline: { port: BASELINE_PORT, pid: baseline.pid } };
    for (const side of settings.sides) {
      if (!targets[side]) throw new Error(`unknown side ${side}`);
      const context = { databaseUrl: database.url, databaseName: database.name, controlUrl: cielo.controlUrl, simulatorPid: cielo.child.pid };
      sides.push(await runSide(side, targets[side].port, targets[side].pid, sellers, context));
      await sleep(settings.wavePauseMs);
    }
  } finally {
    await Promise.all([service.stop(), baseline.stop()]);
    ledgerVerify = await verifyLedger(serviceEnv).catch((error) => ({ exitCode: null, output: error.message }));
    cielo.child.kill('SIGTERM');
    await database.drop();
  }

  const targetP99 = settings.latencyMs + P99_MARGIN_MS;
  console.log(`\nCielo answering each sale in ${settings.latencyMs} ms; ${settings.inFlight} card sales at once, ${settings.waves} wave(s) per side:\n`);
  console.log('| Side | Wave | In flight | Completed | 201 | 503 | p50 / p99 / max ms | Peak RSS MiB | CPU ms per sale: server / PostgreSQL / simulator / load |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const s of sides) {
    for (const w of s.waves) {
      const cpu = w.cpuMsPerSale;
      console.log(`| ${s.side} | ${w.wave} | ${w.inFlight} | ${w.completed} | ${w.answered201} | ${w.answered503} | ${w.latencyMs.p50} / ${w.latencyMs.p99} / ${w.latencyMs.max} | ${w.peakRssMiB} | ${cpu.server} / ${cpu.postgres} / ${cpu.simulator} / ${cpu.load} |`);
    }
  }
  console.log('');
  for (const s of sides) {
    const statuses = s.databaseStatuses.map((r) => `${r.sales} ${r.status} (${r.provider})`).join(', ');
    console.log(
      `${s.side}: ${s.totals.completed} of ${s.totals.sales} sales answered; in the database ${statuses}; ${s.cieloPosts.posts} POST /1/sales at the simulator for them ` +
        `(${s.cieloPosts.withoutPost} without one, ${s.cieloPosts.postedTwiceOrMore} posted twice or more); RSS ${s.totals.rssAtStartMiB} MiB before the first wave, ${s.totals.rssAtEndMiB} MiB after the last`,
    );
  }
  const serviceSide = sides.find((s) => s.side === 'service');
  const verdict = serviceSide
    ? {
        allCompleted: serviceSide.totals.completed === serviceSide.totals.sales,
        no503: serviceSide.totals.answered503 === 0,
        p99WithinTarget: serviceSide.totals.p99Ms <= targetP99,
        rssUnderLimit: serviceSide.totals.peakRssMiB < RSS_LIMIT_MIB,
        onePostPerSale: serviceSide.cieloPosts.posts === serviceSide.cieloPosts.sales && serviceSide.cieloPosts.postedTwiceOrMore === 0,
      }
    : null;
  if (verdict) {
    const met = Object.values(verdict).every(Boolean);
    console.log(`\nTarget on the service (all complete, no 503, p99 ≤ ${targetP99} ms, peak RSS < ${RSS_LIMIT_MIB} MiB, one POST per sale): ${met ? 'met' : 'NOT met'} ${JSON.stringify(verdict)}`);
  }
  for (const s of sides) if (s.simulatorViolations > 0) console.log(`the simulator saw ${s.simulatorViolations} schema violation(s) during the ${s.side} side`);
  console.log(`\nledger:verify on the bench database (exit ${ledgerVerify.exitCode}):\n${ledgerVerify.output.trim().replace(/^/gm, '  ')}`);

  const output = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtEnd: os.loadavg() },
    settings: { ...settings, targetP99Ms: targetP99, rssLimitMiB: RSS_LIMIT_MIB },
    verdict,
    sides,
    ledgerVerify,
  };
  const file = env.BENCH_OUTPUT || path.join(__dirname, 'acquirer-results.json');
  fs.writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\nbench:acquirer: wrote ${path.relative(process.cwd(), file)}`);
  if (ledgerVerify.exitCode !== 0) process.exitCode = 1;
}

main().catch((error) => {
  console.error(`bench:acquirer failed: ${error.stack}`);
  process.exit(1);
});
