'use strict';
/**
 * `npm run bench`: the service's production build against the lean baseline (bench/baseline.js), side
 * by side on this machine, on one fresh database. The baseline does each route's contract the leanest
 * honest way on node:http + pg (prepared statements, one key-pair query per request, a card sale in
 * three round trips with the same crash safety, the QR as a 1-bit PNG of the same code; its header
 * lists the round trips of each route), so a ratio says how far the service is from what this machine,
 * PostgreSQL and Node allow, not from a copy of itself. For each scenario, service and baseline are
 * driven in turn by autocannon in a separate process (bench/load.js) with the same connections and
 * duration; each run is preceded by a short warm-up that is not counted. Prints req/s, p50/p99,
 * errors, peak RSS (and the median RSS of the run's first and last fifth, to tell growth from a peak),
 * the cores used by each part (the server, PostgreSQL, Redis, the load generator) and the server's CPU
 * per request, and writes bench/results.json.
 *
 * Scenario `floor` (the framework floor, bench/floor.js): GET /floor answering a constant JSON, served
 * by a NestJS app on @nestjs/platform-express with one controller (the "service" side of its rows) and
 * by node:http (the "baseline" side), both started for that scenario only. Their difference in server
 * CPU per request is what the framework alone costs; the summary splits each route's gap (service CPU
 * per request − baseline CPU per request) into that framework part and the rest, ours (results.json
 * `gaps`).
 *
 * After the last scenario the service's `ledger:verify` runs on the bench database, over both sides'
 * postings (every posting sums to zero, every balance equals its entries and its last posting): printed,
 * and kept in results.json (`ledgerVerify`).
 *
 * Env (defaults in brackets): BENCH_DURATION seconds per measured run [20], BENCH_WARMUP seconds [3],
 * BENCH_CONNECTIONS [32], BENCH_ROUNDS service/baseline alternations per scenario [1],
 * BENCH_SCENARIOS comma-separated subset of floor,pix,card,transaction,balance,cashout, run in the
 * order given [all, in that order: the floor first, and the cashout last, so that the payouts its
 * withdrawals leave to send (the service's Bull jobs, the baseline's in-process queue) do not run
 * into another scenario's measurement],
 * BENCH_WORKERS service processes (2+ runs bench/cluster.js) [1], BENCH_SELLERS seeded sellers [8],
 * BENCH_SIDES which sides to drive, for quick experiments on one of them [service,baseline],
 * BENCH_CPU_PROF a directory: the service runs with node --cpu-prof and writes its profile there,
 * BENCH_SERVICE_PORT [3101], BENCH_BASELINE_PORT [3102], BENCH_FLOOR_NEST_PORT [3103],
 * BENCH_FLOOR_HTTP_PORT [3104], BENCH_OUTPUT the results file [bench/results.json], BENCH_CARD_PROVIDER
 * cielo: the card scenario's charges go, on both sides, to Cielo's API E-commerce 3.0 played by the Cielo
 * simulator in a process of its own (test/e2e/setup/cielo/chaos-launcher.ts, faults off; its CPU is
 * neither side's): the service with CARD_PROVIDER=cielo, the baseline with the same POST /1/sales [sandbox],
 * DATABASE_URL (its server is used; the database is bench-owned, created and dropped), REDIS_URL.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { prepareDatabase } = require('../dist/src/database/prepare-database');

const env = process.env;
const settings = {
  duration: Number(env.BENCH_DURATION || 20),
  warmup: Number(env.BENCH_WARMUP || 3),
  connections: Number(env.BENCH_CONNECTIONS || 32),
  rounds: Number(env.BENCH_ROUNDS || 1),
  workers: Number(env.BENCH_WORKERS || 1),
  sellers: Number(env.BENCH_SELLERS || 8),
  scenarios: (env.BENCH_SCENARIOS || 'floor,pix,card,transaction,balance,cashout').split(',').map((s) => s.trim()).filter(Boolean),
  sides: (env.BENCH_SIDES || 'service,baseline').split(',').map((s) => s.trim()),
  cpuProfileDir: env.BENCH_CPU_PROF ? path.resolve(env.BENCH_CPU_PROF) : null,
  cardProvider: env.BENCH_CARD_PROVIDER || 'sandbox',
};
const { ADMIN_TOKEN } = require('./service-app');
const { productionNodeFlags } = require('./production-node');
const SERVICE_PORT = Number(env.BENCH_SERVICE_PORT || 3101);
const BASELINE_PORT = Number(env.BENCH_BASELINE_PORT || 3102);
const FLOOR_NEST_PORT = Number(env.BENCH_FLOOR_NEST_PORT || 3103);
const FLOOR_HTTP_PORT = Number(env.BENCH_FLOOR_HTTP_PORT || 3104);
const root = path.join(__dirname, '..');

const customer = { name: 'Ana Souza', email: 'ana@example.com', phone: '11987654321' };
const items = [{ title: 'Curso online', unitPrice: 4990, quantity: 1, tangible: false }];
const SCENARIOS = {
  pix: { title: 'POST /api/sales (PIX)', method: 'POST', path: '/api/sales', body: { amount: 4990, paymentMethod: 'PIX', pix: {}, customer, items } },
  card: {
    title: 'POST /api/sales (card)',
    method: 'POST',
    path: '/api/sales',
    body: {
      amount: 4990,
      paymentMethod: 'CREDIT_CARD',
      installments: { number: 1 },
      card: { number: '4111111111111111', holderName: 'ANA SOUZA', expirationMonth: '12', expirationYear: '2031', cvv: '123' },
      customer,
      items,
    },
  },
  transaction: { title: 'GET /api/transactions/{id}', method: 'GET', path: '/api/transactions/:saleId' },
  balance: { title: 'GET /api/public/balance', method: 'GET', path: '/api/public/balance' },
  cashout: { title: 'POST /api/public/cashout', method: 'POST', path: '/api/public/cashout', body: { amount: 100, pixKey: '52998224725', pixKeyType: 'CPF' } },
  // The framework floor: its "service" side is the NestJS/Express app, its "baseline" side node:http.
  floor: { title: 'GET /floor (constant JSON)', method: 'GET', path: '/floor', floor: true },
};
const SIDE_NAMES = { service: 'service', baseline: 'baseline' };
const FLOOR_SIDE_NAMES = { service: 'nest', baseline: 'http' };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------- processes and /proc ----------

function procStat(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
    const rssPages = Number(fields[21]);
    return { pid, ppid: Number(fields[1]), comm, ticks, rssBytes: rssPages * 4096 };
  } catch {
    return null;
  }
}

function allProcesses() {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => procStat(Number(name)))
    .filter(Boolean);
}

/** The process and its descendants. */
function tree(processes, pid) {
  const result = processes.filter((p) => p.pid === pid);
  for (let i = 0; i < result.length; i += 1) result.push(...processes.filter((p) => p.ppid === result[i].pid));
  return result;
}

const TICKS_PER_SECOND = 100;

function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * CPU seconds of each part, per process between its first and last sample (processes that come or go
 * count for the part of the run they lived), and the server's peak RSS (all its processes), sampled
 * every `intervalMs` (250) while `work` runs. PostgreSQL is its backends connected to the bench database
 * (other databases' sessions, such as other test runs on the machine, are left out). `parts`: more parts
 * to count, each a name and the pid of its process tree (the Cielo simulator).
 */
async function measure(serverPid, databaseName, loadPidRef, work, { intervalMs = 250, parts = {} } = {}) {
  const seen = new Map(); // pid -> { part, first, last }
  const pgBackends = new Map(); // pid -> is a backend of the bench database
  let peakRss = 0;
  const rssSamples = []; // [seconds since start, server RSS bytes]
  const note = (part, p, first) => {
    const entry = seen.get(p.pid);
    if (entry) entry.last = p.ticks;
    else seen.set(p.pid, { part, first: first ? p.ticks : 0, last: p.ticks });
  };
  const sample = (first) => {
    const processes = allProcesses();
    const server = tree(processes, serverPid);
    const rss = server.reduce((sum, p) => sum + p.rssBytes, 0);
    peakRss = Math.max(peakRss, rss);
    rssSamples.push([(Date.now() - started) / 1000, rss]);
    for (const p of server) note('server', p, first);
    for (const [part, pid] of Object.entries(parts)) for (const p of tree(processes, pid)) note(part, p, first);
    for (const p of processes) {
      if (p.comm === 'postgres') {
        if (!pgBackends.has(p.pid)) pgBackends.set(p.pid, cmdline(p.pid).includes(databaseName));
        if (pgBackends.get(p.pid)) note('postgres', p, first);
      } else if (p.comm.startsWith('redis-server')) note('redis', p, first);
    }
    const load = loadPidRef.pid && procStat(loadPidRef.pid);
    if (load) note('load', load, first);
  };
  const started = Date.now();
  sample(true);
  const timer = setInterval(() => sample(false), intervalMs);
  const result = await work();
  clearInterval(timer);
  sample(false);
  const seconds = (Date.now() - started) / 1000;
  const cores = { server: 0, postgres: 0, redis: 0, load: 0, ...Object.fromEntries(Object.keys(parts).map((part) => [part, 0])) };
  for (const entry of seen.values()) cores[entry.part] += (entry.last - entry.first) / TICKS_PER_SECOND / seconds;
  // RSS over the run: the median of its first and of its last fifth, to tell growth from a peak.
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const fifth = seconds / 5;
  const rssFirst = median(rssSamples.filter(([at]) => at <= fifth).map(([, rss]) => rss));
  const rssLast = median(rssSamples.filter(([at]) => at >= seconds - fifth).map(([, rss]) => rss));
  return { result, peakRss, rssFirst, rssLast, cores };
}

function startProcess(label, args, extraEnv) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.on('exit', (code, signal) => {
    if (!child.stopping) console.error(`${label} exited (${code ?? signal}): ${stderr}`);
  });
  child.stop = () =>
    new Promise((resolve) => {
      child.stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  return child;
}

async function waitForHttp(url, child) {
  for (let i = 0; i < 240; i += 1) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${url} did not answer in 60 s`);
}

// ---------- seeding through the operator API ----------

async function call(base, method, route, body, headers = {}) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Sellers with a key pair each, cashouts enabled, 9.9 million reais available, and one PIX sale to look up. */
async function seed(base, count) {
  const sellers = [];
  for (let i = 0; i < count; i += 1) {
    const created = await call(base, 'POST', '/admin/sellers', { name: `Loja ${i}`, email: `loja${i}@bench.example.com`, permissions: { transferEnabled: true } }, { 'x-admin-token': ADMIN_TOKEN });
    const keys = { 'x-api-public-key': created.credentials.publicKey, 'x-api-private-key': created.credentials.privateKey };
    const funding = await call(base, 'POST', '/api/sales', { amount: 1_000_000_000, paymentMethod: 'TRANSFER', customer, items: [{ ...items[0], unitPrice: 1_000_000_000 }] }, keys);
    await call(base, 'POST', `/api/sandbox/sales/${funding.sale.id}/events`, { event: 'PAYMENT_CONFIRMED' }, keys);
    const pix = await call(base, 'POST', '/api/sales', SCENARIOS.pix.body, keys);
    sellers.push({ sellerId: created.seller.id, publicKey: created.credentials.publicKey, privateKey: created.credentials.privateKey, saleId: pix.sale.id });
  }
  return sellers;
}

// ---------- load ----------

function runLoad(url, scenario, duration, sellers, loadPidRef) {
  return new Promise((resolve, reject) => {
    const config = { url, method: scenario.method, path: scenario.path, body: scenario.body, connections: settings.connections, duration, sellers };
    const child = spawn(process.execPath, [path.join(__dirname, 'load.js'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
    loadPidRef.pid = child.pid;
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('exit', (code) => {
      loadPidRef.pid = null;
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      resolve(JSON.parse(stdout));
    });
  });
}

function summarize(side, scenarioName, measured) {
  const r = measured.result;
  const non2xx = r.non2xx ?? 0;
  return {
    side,
    scenario: scenarioName,
    requestsPerSecond: Math.round((r.requests.total / r.duration) * 10) / 10,
    requests: r.requests.total,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    errors: r.errors + r.timeouts + non2xx,
    non2xx,
    statusCodes: r.statusCodeStats,
    peakRssMiB: Math.round(measured.peakRss / 1048576),
    rssFirstFifthMiB: Math.round(measured.rssFirst / 1048576),
    rssLastFifthMiB: Math.round(measured.rssLast / 1048576),
    cores: Object.fromEntries(Object.entries(measured.cores).map(([k, v]) => [k, Math.round(v * 100) / 100])),
    // The server's CPU time per request served (all its processes), in milliseconds.
    cpuMsPerRequest: r.requests.total > 0 ? Math.round(((measured.cores.server * r.duration * 1000) / r.requests.total) * 1000) / 1000 : null,
  };
}

// ---------- main ----------

/**
 * A bench-owned database on DATABASE_URL's server: its URL and name, `create` (created and migrated, as
 * the service does at boot) and `drop`.
 */
function benchDatabase() {
  const url = new URL(env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/payment_gateway');
  url.pathname = `/payment_gateway_bench_${Date.now()}_${process.pid}`;
  const maintenanceUrl = new URL(url);
  maintenanceUrl.pathname = '/postgres';
  const name = url.pathname.slice(1);
  return {
    url: url.toString(),
    name,
    create: () => prepareDatabase(url.toString()),
    drop: async () => {
      const maintenance = new Client({ connectionString: maintenanceUrl.toString() });
      await maintenance.connect();
      await maintenance.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await maintenance.end();
    },
  };
}

/**
 * The service's environment in a benchmark: the production build's (`NODE_ENV=production`, `LOG_LEVEL` at
 * its default), the rate limit off, fresh secrets, on `databaseUrl`; `extra` on top.
 */
function serviceEnvironment(databaseUrl, port, extra = {}) {
  const inherited = { ...env };
  delete inherited.LOG_LEVEL; // the production default
  return {
    ...inherited,
    NODE_ENV: 'production',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    ENCRYPTION_KEY: require('node:crypto').randomBytes(32).toString('hex'),
    SESSION_SECRET: require('node:crypto').randomBytes(32).toString('hex'),
    RATE_LIMIT_RPS: '0',
    ...extra,
  };
}

/** The service's production build (`entry`, dist/src/main.js by default) with `npm start`'s node flags; `stop()` ends it. */
function startService(childEnv, { entry = path.join(root, 'dist', 'src', 'main.js'), nodeArgs = [] } = {}) {
  const service = spawn(process.execPath, [...productionNodeFlags(), ...nodeArgs, entry], { cwd: root, env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  return Object.assign(service, wrap(service, 'service'));
}

async function main() {
  const started = new Date();
  const database = benchDatabase();
  const databaseUrl = database.url;
  const databaseName = database.name;

  console.log(`bench: ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`bench: ${settings.connections} connections, ${settings.duration} s per run (+${settings.warmup} s warm-up), ${settings.rounds} round(s), ${settings.workers} service process(es), database ${databaseName}`);
  await database.create();

  const profileArgs = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`, '-r', path.join(__dirname, 'exit-on-signal.js')] : [];
  const entry = settings.workers > 1 ? path.join(__dirname, 'cluster.js') : path.join(root, 'dist', 'src', 'main.js');
  // BENCH_CARD_PROVIDER=cielo: both sides' card sales go to the Cielo simulator (its own process, no faults).
  const cielo = settings.cardProvider === 'cielo' ? await startCieloSimulator() : null;
  const cieloEnv = cielo ? { ...cielo.env, CIELO_TIMEOUT_MS: '30000' } : {};
  if (cielo) console.log(`bench: card sales through Cielo's API E-commerce 3.0 at the simulator (${cieloEnv.CIELO_API_URL}), both sides`);
  const childEnv = serviceEnvironment(databaseUrl, SERVICE_PORT, { BENCH_WORKERS: String(settings.workers), ...cieloEnv });
  const service = startService(childEnv, { entry, nodeArgs: profileArgs });
  const baseline = startProcess('baseline', [path.join(__dirname, 'baseline.js')], { PORT: String(BASELINE_PORT), DATABASE_URL: databaseUrl, ...cieloEnv });
  if (cielo) process.on('exit', () => cielo.child.kill('SIGKILL'));
  const results = [];
  let ledgerVerify = null;
  try {
    const serviceBase = `http://127.0.0.1:${SERVICE_PORT}`;
    const baselineBase = `http://127.0.0.1:${BASELINE_PORT}`;
    await waitForHttp(`${serviceBase}/health/live`, service);
    await waitForHttp(`${baselineBase}/health/live`, baseline);
    const sellers = await seed(serviceBase, settings.sellers);
    console.log(`bench: seeded ${sellers.length} sellers`);
    const routeSides = [
      { side: 'service', base: serviceBase, pid: service.pid },
      { side: 'baseline', base: baselineBase, pid: baseline.pid },
    ];
    for (const name of settings.scenarios) {
      const scenario = SCENARIOS[name];
      if (!scenario) throw new Error(`unknown scenario ${name}`);
      const floor = scenario.floor ? await startFloor() : null;
      try {
        const sides = (floor ?? routeSides).filter((target) => settings.sides.includes(target.side));
        const names = scenario.floor ? FLOOR_SIDE_NAMES : SIDE_NAMES;
        for (let round = 0; round < settings.rounds; round += 1) {
          for (const target of round % 2 === 0 ? sides : [...sides].reverse()) {
            const loadPidRef = { pid: null };
            if (settings.warmup > 0) await runLoad(target.base, scenario, settings.warmup, sellers, loadPidRef);
            const measured = await measure(target.pid, databaseName, loadPidRef, () => runLoad(target.base, scenario, settings.duration, sellers, loadPidRef));
            const row = { ...summarize(target.side, name, measured), server: names[target.side], round: round + 1, loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100) };
            results.push(row);
            console.log(
              `  ${scenario.title.padEnd(28)} ${names[target.side].padEnd(8)} ${String(row.requestsPerSecond).padStart(8)} req/s  p50 ${row.latencyMs.p50} ms  p99 ${row.latencyMs.p99} ms  errors ${row.errors}  rss ${row.peakRssMiB} MiB (${row.rssFirstFifthMiB} → ${row.rssLastFifthMiB})  cores server ${row.cores.server} pg ${row.cores.postgres} load ${row.cores.load}  cpu ${row.cpuMsPerRequest} ms/req`,
            );
          }
        }
      } finally {
        if (floor) await Promise.all(floor.map((target) => target.child.stop()));
      }
    }
  } finally {
    await Promise.all([service.stop(), baseline.stop()]);
    // Both sides' postings, checked by the service's own ledger:verify before the database goes.
    ledgerVerify = await verifyLedger(childEnv).catch((error) => ({ exitCode: null, output: error.message }));
    // The simulator ends with the run, after ledger:verify (whose configuration names its CA file; SIGTERM removes it).
    if (cielo) cielo.child.kill('SIGTERM');
    await database.drop();
  }

  const bothSides = ['service', 'baseline'].every((side) => settings.sides.includes(side));
  const mean = (rows, pick) => rows.reduce((sum, r) => sum + pick(r), 0) / rows.length;
  const round3 = (value) => Math.round(value * 1000) / 1000;
  const sideSummary = (rows) => ({
    rps: Math.round(mean(rows, (r) => r.requestsPerSecond)),
    p50: Math.max(...rows.map((r) => r.latencyMs.p50)),
    p99: Math.max(...rows.map((r) => r.latencyMs.p99)),
    errors: rows.reduce((n, r) => n + r.errors, 0),
    rssMiB: Math.max(...rows.map((r) => r.peakRssMiB)),
    cores: rows[0].cores,
    cpuMsPerRequest: round3(mean(rows, (r) => r.cpuMsPerRequest ?? 0)),
  });
  const table = (bothSides ? settings.scenarios : []).map((name) => {
    const of = (side) => results.filter((r) => r.scenario === name && r.side === side);
    const service = sideSummary(of('service'));
    const baselineSide = sideSummary(of('baseline'));
    return {
      scenario: SCENARIOS[name].title,
      ...(SCENARIOS[name].floor ? { sides: { service: 'NestJS on Express, one controller (bench/floor.js nest)', baseline: 'node:http (bench/floor.js http)' } } : {}),
      service,
      baseline: baselineSide,
      throughputRatio: Math.round((service.rps / baselineSide.rps) * 100) / 100,
      p99Ratio: Math.round((service.p99 / Math.max(baselineSide.p99, 1)) * 100) / 100,
    };
  });

  // Each route's gap in server CPU per request, split into the framework floor's part and ours.
  const floorRow = table.find((row) => row.scenario === SCENARIOS.floor.title);
  const framework = floorRow ? round3(floorRow.service.cpuMsPerRequest - floorRow.baseline.cpuMsPerRequest) : null;
  const gaps = table
    .filter((row) => row !== floorRow)
    .map((row) => {
      const gap = round3(row.service.cpuMsPerRequest - row.baseline.cpuMsPerRequest);
      return {
        scenario: row.scenario,
        serviceCpuMs: row.service.cpuMsPerRequest,
        baselineCpuMs: row.baseline.cpuMsPerRequest,
        gapCpuMs: gap,
        frameworkCpuMs: framework,
        oursCpuMs: framework === null ? null : round3(gap - framework),
      };
    });

  console.log('\n| Scenario | Service req/s | p50 / p99 ms | errors | RSS MiB | CPU ms/req | Baseline req/s | p50 / p99 ms | errors | RSS MiB | CPU ms/req | Ratio req/s | Ratio p99 |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of table) {
    const s = row.service;
    const b = row.baseline;
    const title = row.sides ? `${row.scenario}: NestJS/Express vs node:http` : row.scenario;
    console.log(`| ${title} | ${s.rps} | ${s.p50} / ${s.p99} | ${s.errors} | ${s.rssMiB} | ${s.cpuMsPerRequest} | ${b.rps} | ${b.p50} / ${b.p99} | ${b.errors} | ${b.rssMiB} | ${b.cpuMsPerRequest} | ${row.throughputRatio}x | ${row.p99Ratio}x |`);
  }
  console.log('\nCores used during each measured run (server process(es) / PostgreSQL / load generator):');
  for (const row of table) console.log(`  ${row.scenario.padEnd(28)} service ${fmtCores(row.service.cores)}   baseline ${fmtCores(row.baseline.cores)}`);
  if (gaps.length > 0) {
    console.log(
      framework === null
        ? '\nServer CPU per request, service − baseline (add the floor scenario to split it into framework and ours):'
        : `\nServer CPU per request, service − baseline; the framework floor (NestJS/Express − node:http) is ${framework} ms:`,
    );
    for (const gap of gaps) {
      console.log(`  ${gap.scenario.padEnd(28)} ${gap.serviceCpuMs} − ${gap.baselineCpuMs} = ${gap.gapCpuMs} ms${framework === null ? '' : `: framework ${framework}, ours ${gap.oursCpuMs}`}`);
    }
  }

  console.log(`\nledger:verify on the bench database (exit ${ledgerVerify.exitCode}):\n${ledgerVerify.output.trim().replace(/^/gm, '  ')}`);

  const output = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtEnd: os.loadavg() },
    settings,
    table,
    gaps,
    ledgerVerify,
    runs: results,
  };
  const file = env.BENCH_OUTPUT || path.join(__dirname, 'results.json');
  fs.writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\nbench: wrote ${path.relative(process.cwd(), file)}`);
}

/** `ledger:verify` (dist/src/ledger/ledger-verify.js) on the bench database: its exit code and output. */
function verifyLedger(childEnv) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'ledger', 'ledger-verify.js')], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (exitCode) => resolve({ exitCode, output }));
  });
}

/**
 * The Cielo simulator (test/e2e/setup/cielo/chaos-launcher.ts through ts-node, faults off) in a process of its
 * own: its CPU is neither side's; its JSON line gives the CIELO_* variables pointing a gateway at it, and its
 * control URL (GET /state). `launcherEnv`: more CHAOS_CIELO_* settings (CHAOS_CIELO_LATENCY_MS).
 */
async function startCieloSimulator(launcherEnv = {}) {
  const { randomUUID, randomBytes } = require('node:crypto');
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(root, 'test', 'e2e', 'setup', 'cielo', 'chaos-launcher.ts')], {
    cwd: root,
    env: { ...env, CHAOS_CIELO_MERCHANT_ID: randomUUID(), CHAOS_CIELO_MERCHANT_KEY: randomBytes(20).toString('hex').toUpperCase(), CHAOS_CIELO_FAULTS: 'false', ...launcherEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const info = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(stdout.slice(0, newline)));
    });
    child.once('exit', (code) => reject(new Error(`the Cielo simulator exited ${code}`)));
  });
  child.stdout.resume();
  return { child, env: info.env, controlUrl: info.controlUrl };
}

/** The two floor servers (bench/floor.js), started for the floor scenario only: its "service" and "baseline" sides. */
async function startFloor() {
  const nest = startProcess('floor (nest)', [path.join(__dirname, 'floor.js'), 'nest'], { PORT: String(FLOOR_NEST_PORT) });
  const bare = startProcess('floor (http)', [path.join(__dirname, 'floor.js'), 'http'], { PORT: String(FLOOR_HTTP_PORT) });
  const sides = [
    { side: 'service', base: `http://127.0.0.1:${FLOOR_NEST_PORT}`, pid: nest.pid, child: nest },
    { side: 'baseline', base: `http://127.0.0.1:${FLOOR_HTTP_PORT}`, pid: bare.pid, child: bare },
  ];
  try {
    for (const target of sides) await waitForHttp(`${target.base}/floor`, target.child);
  } catch (error) {
    await Promise.all(sides.map((target) => target.child.stop()));
    throw error;
  }
  return sides;
}

function fmtCores(c) {
  return `${c.server} / ${c.postgres} / ${c.load}`;
}

function wrap(child, label) {
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.on('exit', (code, signal) => {
    if (!child.stopping) console.error(`${label} exited (${code ?? signal}): ${stderr}`);
  });
  return {
    stop: () =>
      new Promise((resolve) => {
        child.stopping = true;
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

if (require.main === module) {
  main().catch((error) => {
    console.error(`bench failed: ${error.stack}`);
    process.exit(1);
  });
}

// For the other benchmarks (bench/acquirer-latency.js): the same database, service, seeding, simulator and checks.
module.exports = { SCENARIOS, benchDatabase, serviceEnvironment, startService, startProcess, waitForHttp, seed, measure, startCieloSimulator, verifyLedger };
