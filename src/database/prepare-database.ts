import { DataSource } from 'typeorm';
import { describeDatabaseUrl } from './database-url';
import { MIGRATIONS } from '../../migrations';

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const { databaseName, maintenanceUrl } = describeDatabaseUrl(url);
  const maintenance = new DataSource({ type: 'postgres', url: maintenanceUrl, extra: { max: 1 } });
  await maintenance.initialize();
  try {
    const found: unknown[] = await maintenance.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (found.length > 0) return false;
    await maintenance.query(`CREATE DATABASE "${databaseName.replace(/"/g, '""')}"`);
    return true;
  } catch (error) {
    // Two processes starting at once: the other one created it first.
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  } finally {
    await maintenance.destroy();
  }
}

/** Runs every pending migration of migrations/ (the only source of the schema). Returns their names. */
export async function runPendingMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource({ type: 'postgres', url, migrations: MIGRATIONS, migrationsTransactionMode: 'each' });
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations();
    return applied.map((m) => m.name);
  } finally {
    await dataSource.destroy();
  }
}

export async function prepareDatabase(url: string): Promise<string[]> {
  await ensureDatabaseExists(url);
  return runPendingMigrations(url);
}
