import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { pgPool } from './plain-rows';

type Connect = (...args: unknown[]) => unknown;

/** Marks the work of a transaction (only with DB_GUARD_NESTED_CONNECTIONS). */
const transactionWork = new AsyncLocalStorage<true>();

/**
 * Whether this code runs inside a transaction's work, as the guard marks it (DB_GUARD_NESTED_CONNECTIONS,
 * as the e2e suite runs): always false without the guard.
 */
export function insideTransaction(): boolean {
  return transactionWork.getStore() === true;
}

/** Raised when code inside a transaction asks the pool for a second connection. */
export class NestedConnectionError extends Error {
  constructor() {
    super('A second database connection was requested inside a transaction: pass the transaction manager instead');
    this.name = 'NestedConnectionError';
  }
}

/**
 * With DB_GUARD_NESTED_CONNECTIONS=true (the e2e suite runs so), a query that would take a second pool
 * connection while the same unit of work holds one in a transaction fails at once. Under a burst such a
 * query waits for a connection that none of the waiting transactions will free (style.md, "Transactions
 * and concurrency"); the guard makes the mistake visible in every test instead of only under load.
 */
@Injectable()
export class NestedConnectionGuard implements OnModuleInit {
  private readonly logger = new Logger(NestedConnectionGuard.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.database.guardNestedConnections) return;
    const manager = this.dataSource.manager;
    const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
    // Only the work callback runs marked: the transaction's own connection is taken before it starts.
    (manager as unknown as { transaction: unknown }).transaction = (...args: unknown[]) => {
      const work = args[args.length - 1] as (...inner: unknown[]) => unknown;
      const marked = (...inner: unknown[]) => transactionWork.run(true, () => work(...inner));
      return transaction(...args.slice(0, -1), marked);
    };
    const pool = pgPool(this.dataSource) as unknown as { connect: Connect };
    const connect = pool.connect.bind(pool);
    pool.connect = (...args: unknown[]) => {
      if (insideTransaction()) {
        const error = new NestedConnectionError();
        this.logger.error({ err: error }, error.message);
        const callback = args.find((arg) => typeof arg === 'function') as ((error: Error) => void) | undefined;
        if (callback) return callback(error);
        return Promise.reject(error);
      }
      return connect(...args);
    };
  }
}
