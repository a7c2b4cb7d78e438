import { DataSource } from 'typeorm';
import { describeDatabaseUrl } from '../../../src/database/database-url';

/** Drops the run's database, even when connections are still open. */
export default async function globalTeardown(): Promise<void> {
  const url = process.env.E2E_DATABASE_URL;
  if (!url || process.env.E2E_KEEP_DATABASE === 'true') return;
  const { databaseName, maintenanceUrl } = describeDatabaseUrl(url);
  const maintenance = new DataSource({ type: 'postgres', url: maintenanceUrl });
  await maintenance.initialize();
  try {
    await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  } finally {
    await maintenance.destroy();
  }
}
