import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource } from 'typeorm';
import { describeDatabaseUrl } from '../../../src/database/database-url';
import { scanLogs, summarizeReliability } from './reliability-report';

/**
 * After the whole suite: `ledger:verify` must find every posting summing to zero and every balance equal to the sum of its entries in the
 * run's database (platform.md §4); every log line the run's apps wrote must be free of secrets and card
 * data; the run's reliability figures are printed. Then the database is dropped, even with connections
 * still open.
 */
export default async function globalTeardown(): Promise<void> {
  const url = process.env.E2E_DATABASE_URL;
  if (!url) return;
  const verify = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/ledger/ledger-verify.ts'], {
    env: { ...process.env, DATABASE_URL: url, LOG_FILE: undefined },
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

  const logFile = process.env.LOG_FILE as string;
  // Give the apps' asynchronous log streams a moment to reach the file.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const scan = scanLogs(logFile);
  const figures = summarizeReliability(process.env.E2E_RELIABILITY_FILE as string);
  const faults = Object.entries(figures.faults).map(([kind, count]) => `${count} ${kind}`).join(', ') || 'none';
  process.stdout.write(
    [
      'reliability figures of this run:',
      `  hostile inputs tried: ${figures.hostileInputs}, answered 5xx: 0 (any 5xx fails its test)`,
      `  faults injected: ${faults}`,
      `  events through faults: ${figures.eventsExpected}, delivered: ${figures.eventsDelivered}, lost: ${figures.eventsExpected - figures.eventsDelivered}`,
      `  ledger: ${verify.status === 0 ? 'every posting sums to zero, every balance equals its entries, 0 cents unaccounted' : 'MISMATCH, see ledger:verify above'}`,
      `  log lines scanned for secrets and card data: ${scan.lines}, leaks: ${scan.leaks.length}`,
      '',
    ].join('\n'),
  );
  const keepLogs = scan.leaks.length > 0 || process.env.E2E_KEEP_LOGS === 'true';
  if (keepLogs) process.stdout.write(`  the run's log is kept in ${logFile}\n`);
  else rmSync(dirname(logFile), { recursive: true, force: true });

  if (verify.status !== 0) throw new Error('ledger:verify failed after the e2e suite: a balance differs from its ledger entries');
  if (figures.eventsDelivered < figures.eventsExpected) throw new Error('events were lost through an injected fault');
  if (scan.leaks.length > 0) throw new Error(`secrets or card data in the run's logs:\n${scan.leaks.slice(0, 20).join('\n')}`);
  // A scan that saw nothing proves nothing: the run's apps must have logged into the file.
  if (process.env.E2E_LOG_LEVEL === undefined && scan.lines === 0) throw new Error(`no log line was scanned; the run's apps did not log to ${logFile}`);
}
