/**
 * Data source for the TypeORM CLI (`npm run migration:run`, `migration:revert`, `migration:create`).
 * The application builds its own connection in database.module.ts from the same settings.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { validateEnvironment } from '../config/env.schema';
import { MIGRATIONS } from '../../migrations';

const env = validateEnvironment(process.env);

export default new DataSource({
  type: 'postgres',
  url: env.DATABASE_URL,
  migrations: MIGRATIONS,
  migrationsTransactionMode: 'each',
});
