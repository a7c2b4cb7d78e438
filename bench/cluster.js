'use strict';
/**
 * Scale-out for the benchmark: BENCH_WORKERS (default 2) service processes on one port through
 * node:cluster (the primary accepts connections and hands them to the workers round-robin), each with
 * its own pool of DB_POOL_SIZE connections, all on the same PostgreSQL and Redis.
 */
const cluster = require('node:cluster');
const path = require('node:path');

if (cluster.isPrimary) {
  const workers = Number(process.env.BENCH_WORKERS || 2);
  cluster.setupPrimary({ exec: path.join(__dirname, '..', 'dist', 'src', 'main.js'), execArgv: process.execArgv });
  for (let i = 0; i < workers; i += 1) cluster.fork();
  let stopping = false;
  cluster.on('exit', (worker, code) => {
    if (!stopping) console.error(`worker ${worker.process.pid} exited with ${code}`);
  });
  process.on('SIGTERM', () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
    });
  });
}
