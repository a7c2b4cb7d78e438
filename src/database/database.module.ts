import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { NestedConnectionGuard } from './nested-connection.guard';
import { preparingPg } from './prepared-statements';

/**
 * The PostgreSQL pool, with deliberate limits (README, configuration): a bounded pool whose waiters give
 * up after DB_POOL_ACQUIRE_TIMEOUT_MS (answered 503 with Retry-After), and per-session statement, lock
 * and idle-in-transaction timeouts so that no burst can leave the pool stuck.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const db = config.database;
        return {
          type: 'postgres' as const,
          // Parameterized statements prepared once per connection (prepared-statements.ts).
          driver: preparingPg,
          url: config.databaseUrl,
          autoLoadEntities: true,
          synchronize: false,
          migrationsRun: false,
          extra: {
            max: db.poolSize,
            connectionTimeoutMillis: db.acquireTimeoutMs,
            idleTimeoutMillis: 30_000,
            // A prepared statement's generic plan is made once per connection, from the tables' sizes then,
            // and kept while the connection lives: planned on a fresh database's few rows it scans whole
            // tables by the thousand rows later (a card sale's answer fell from 3 to 10 ms of PostgreSQL in
            // two minutes). Connections are replaced after a minute (when next released), so every plan is
            // at most a minute older than the tables it reads.
            maxLifetimeSeconds: 60,
            statement_timeout: db.statementTimeoutMs,
            lock_timeout: db.lockTimeoutMs,
            idle_in_transaction_session_timeout: db.idleInTransactionTimeoutMs,
          },
        };
      },
    }),
  ],
  providers: [NestedConnectionGuard],
})
export class DatabaseModule {}
