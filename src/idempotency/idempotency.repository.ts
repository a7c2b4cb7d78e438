import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

export interface StoredKey {
  /** Keyed fingerprint of the request; null for a record whose fingerprint was discarded. */
  fingerprint: string | null;
  resourceId: number | null;
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
}

export interface KeyRef {
  sellerId: number;
  scope: string;
  key: string;
}

@Injectable()
export class IdempotencyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Claims the key for this transaction. A concurrent claim of the same key waits here until the
   * first transaction ends; it then gets false (committed) or the claim (rolled back).
   */
  async claim(ref: KeyRef, fingerprint: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (seller_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (seller_id, scope, key) DO NOTHING RETURNING id`,
      [ref.sellerId, ref.scope, ref.key, fingerprint],
    );
    return rows.length === 1;
  }

  /** The record of this key; outside a transaction when no manager is given (the quick replay check). */
  async find(ref: KeyRef, manager: EntityManager = this.dataSource.manager): Promise<StoredKey | null> {
    const [row]: Array<{
      request_hash: string | null;
      resource_id: string | null;
      response_status: number | null;
      response_body: unknown;
      created_at: Date;
    }> = await manager.query(
      `SELECT request_hash, resource_id, response_status, response_body, created_at FROM idempotency_keys
        WHERE seller_id = $1 AND scope = $2 AND key = $3`,
      [ref.sellerId, ref.scope, ref.key],
    );
    return row
      ? {
          fingerprint: row.request_hash,
          resourceId: row.resource_id === null ? null : Number(row.resource_id),
          responseStatus: row.response_status,
          responseBody: row.response_body,
          createdAt: row.created_at,
        }
      : null;
  }

  async attachResource(ref: KeyRef, resourceId: number, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE idempotency_keys SET resource_id = $4 WHERE seller_id = $1 AND scope = $2 AND key = $3`, [
      ref.sellerId,
      ref.scope,
      ref.key,
      resourceId,
    ]);
  }

  async saveResponse(ref: KeyRef, status: number, body: unknown, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE seller_id = $1 AND scope = $2 AND key = $3`,
      [ref.sellerId, ref.scope, ref.key, status, JSON.stringify(body)],
    );
  }

  async deleteOlderThan(ref: KeyRef, before: Date, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM idempotency_keys WHERE seller_id = $1 AND scope = $2 AND key = $3 AND created_at < $4`, [
      ref.sellerId,
      ref.scope,
      ref.key,
      before,
    ]);
  }

  /** Deletes up to `limit` records created before `before`; returns how many went. */
  async purgeOlderThan(before: Date, limit: number): Promise<number> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM idempotency_keys WHERE id IN (SELECT id FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
      [before, limit],
    );
    return affected;
  }
}
