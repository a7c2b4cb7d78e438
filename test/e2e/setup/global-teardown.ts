import { spawnSync } from 'node:child_process';
import { DataSource } from 'typeorm';
import { describeDatabaseUrl } from '../../../src/database/database-url';

/**
 * After the whole suite: `ledger:verify` must find every balance equal to the sum of its entries in the
 * run's database (platform.md §4), then the database is dropped, even with connections still open.
 */
export default async function globalTeardown(): Promise<void> {
  const url = process.env.E2E_DATABASE_URL;
  if (!url) return;
  const verify = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
  });
  process.stdout.write(`\n${verify.stdout}${verify.stderr}`);
  if (process.env.E2E_KEEP_DATABASE !== 'true') {
    const { databaseName, maintenanceUrl } = describeDatabaseUrl(url);
    const maintenance = new DataSource({ type: 'postgres', url: maintenanceUrl });
    await maintenance.initialize();
    try {
      await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    } finally {
      await maintenance.destroy();
    }
  }
  if (verify.status !== 0) throw new Error('ledger:verify failed after the e2e suite: a balance differs from its ledger entries');
}
