import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export interface StoredKey {
  requestHash: string;
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
}

@Injectable()
export class IdempotencyRepository {
  /**
   * Claims the key for this transaction. A concurrent claim of the same key waits here until the
   * first transaction ends; it then gets false (committed) or the claim (rolled back).
   */
  async claim(sellerId: number, scope: string, key: string, requestHash: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (seller_id, scope, key, request_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (seller_id, scope, key) DO NOTHING RETURNING id`,
      [sellerId, scope, key, requestHash],
    );
    return rows.length === 1;
  }

  async find(sellerId: number, scope: string, key: string, manager: EntityManager): Promise<StoredKey | null> {
    const [row]: Array<{ request_hash: string; response_status: number | null; response_body: unknown; created_at: Date }> =
      await manager.query(
        `SELECT request_hash, response_status, response_body, created_at FROM idempotency_keys
          WHERE seller_id = $1 AND scope = $2 AND key = $3`,
        [sellerId, scope, key],
      );
    return row ? { requestHash: row.request_hash, responseStatus: row.response_status, responseBody: row.response_body, createdAt: row.created_at } : null;
  }

  async saveResponse(sellerId: number, scope: string, key: string, status: number, body: unknown, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE seller_id = $1 AND scope = $2 AND key = $3`,
      [sellerId, scope, key, status, JSON.stringify(body)],
    );
  }

  async deleteOlderThan(sellerId: number, scope: string, key: string, before: Date, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM idempotency_keys WHERE seller_id = $1 AND scope = $2 AND key = $3 AND created_at < $4`, [
      sellerId,
      scope,
      key,
      before,
    ]);
  }
}
