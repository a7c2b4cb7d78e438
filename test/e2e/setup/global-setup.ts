import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDatabaseUrl } from '../../../src/database/database-url';
import { prepareDatabase } from '../../../src/database/prepare-database';

/**
 * Creates a fresh database for this run (dropped by global-teardown) and migrates it once. Every test
 * file boots its own app against it and builds its own sellers, so files never depend on each other.
 * Every app of the run logs at debug level into one file, which the teardown scans for secrets.
 */
export default async function globalSetup(): Promise<void> {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/payment_gateway';
  const url = new URL(base);
  url.pathname = `/payment_gateway_e2e_${Date.now()}_${process.pid}`;
  process.env.DATABASE_URL = url.toString();
  process.env.E2E_DATABASE_URL = url.toString();
  process.env.ADMIN_TOKEN = 'e2e-admin-token-0123456789';
  const outputs = mkdtempSync(join(tmpdir(), 'payment-gateway-e2e-'));
  process.env.LOG_LEVEL = process.env.E2E_LOG_LEVEL ?? 'debug';
  process.env.LOG_FILE = join(outputs, 'service.log');
  process.env.E2E_RELIABILITY_FILE = join(outputs, 'reliability.ndjson');
  process.env.RATE_LIMIT_RPS = '0';
  process.env.POSTBACK_ALLOW_PRIVATE_NETWORKS = 'true';
  // Every app of the suite runs on two connections, and a second connection taken inside a transaction
  // fails the request at once: a unit of work that needs more than one connection cannot pass (issue 8).
  process.env.DB_POOL_SIZE = process.env.DB_POOL_SIZE ?? '2';
  process.env.DB_GUARD_NESTED_CONNECTIONS = 'true';
  // On a loaded 2-core machine a burst of PIX sales (a QR PNG each) can keep both connections busy for
  // seconds; the suite proves correctness, not latency. Tests of the 503 set their own short wait.
  process.env.DB_POOL_ACQUIRE_TIMEOUT_MS = process.env.DB_POOL_ACQUIRE_TIMEOUT_MS ?? '15000';
  await prepareDatabase(url.toString());
  describeDatabaseUrl(url.toString()); // fails loudly on a URL the teardown could not drop
}
