import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import { Pool } from 'pg';
import { AppConfig } from '../config/app-config';

/** Dashboard sessions live this long without a request (each request renews it). */
export const SESSION_IDLE_HOURS = 12;

/**
 * The dashboard's session store: connect-pg-simple over the `dashboard_sessions` table (created by a
 * migration, never by the library), on a small pool of its own so that it never competes with a unit of
 * work's connection. Expired sessions are pruned by the store every 15 minutes.
 */
@Injectable()
export class DashboardSessionStore implements OnApplicationShutdown {
  private readonly pool: Pool;
  readonly store: session.Store & { close(): void };

  constructor(config: AppConfig) {
    this.pool = new Pool({ connectionString: config.databaseUrl, max: 2, application_name: 'dashboard-sessions' });
    this.pool.on('error', () => undefined); // an idle connection dropped by the server is replaced on the next query
    const PgStore = connectPgSimple(session);
    this.store = new PgStore({
      pool: this.pool,
      tableName: 'dashboard_sessions',
      createTableIfMissing: false,
      pruneSessionInterval: 15 * 60,
      ttl: SESSION_IDLE_HOURS * 3600,
    });
  }

  /** Ends every session of this user but `keepSessionId` (after a password change or reset). */
  async endSessionsOf(userId: number, keepSessionId: string | null): Promise<void> {
    await this.pool.query(`DELETE FROM dashboard_sessions WHERE sess->>'userId' = $1 AND sid IS DISTINCT FROM $2`, [String(userId), keepSessionId]);
  }

  async onApplicationShutdown(): Promise<void> {
    this.store.close();
    await this.pool.end();
  }
}
