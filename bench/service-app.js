'use strict';
/**
 * The production build (dist/) started in this process the way bench:billing and bench:large run it: the
 * environment of a production service on `databaseUrl` (fresh keys, the bench's operator token, no rate
 * limit, LOG_LEVEL from BENCH_LOG_LEVEL, default warn), its database prepared, listening on a free port of
 * 127.0.0.1. Answers the app and its base URL. `distDir`: another build to start (bench:hostile's "before").
 */
const crypto = require('node:crypto');
const path = require('node:path');

const ADMIN_TOKEN = 'bench-admin-token-0123456789';

async function startServiceApp(databaseUrl, distDir = path.join(__dirname, '..', 'dist')) {
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    NODE_ENV: 'production',
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    SESSION_SECRET: crypto.randomBytes(32).toString('hex'),
    ADMIN_TOKEN,
    RATE_LIMIT_RPS: '0',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
  });
  const { prepareDatabase } = require(path.join(distDir, 'src/database/prepare-database'));
  const { createApp } = require(path.join(distDir, 'src/configure-app'));
  await prepareDatabase(databaseUrl);
  const app = await createApp();
  await app.listen(0, '127.0.0.1');
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

module.exports = { ADMIN_TOKEN, startServiceApp };
