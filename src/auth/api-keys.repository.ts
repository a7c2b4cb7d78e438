import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { PlainRows } from '../database/plain-rows';
import { ApiKeyEntity } from './entities/api-key.entity';

export interface ActiveKeyWithSeller {
  id: number;
  sellerId: number;
  /** True when the pair has not been marked used in the last minute. */
  lastUseStale: boolean;
  privateKeyHash: string;
  sellerBlocked: boolean;
}

@Injectable()
export class ApiKeysRepository {
  private readonly rows: PlainRows<ApiKeyEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new PlainRows(dataSource.getMetadata(ApiKeyEntity));
  }

  /** The unrevoked key with this public key, with its seller's blocked flag; null when none. */
  async findActiveByPublicKey(publicKey: string): Promise<ActiveKeyWithSeller | null> {
    const rows: Array<{ id: number; seller_id: number; private_key_hash: string; blocked: boolean; stale: boolean }> = await this.dataSource.query(
      `SELECT k.id, k.seller_id, k.private_key_hash, s.blocked,
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys k JOIN sellers s ON s.id = k.seller_id
        WHERE k.public_key = $1 AND k.revoked_at IS NULL`,
      [publicKey],
    );
    const row = rows[0];
    return row
      ? { id: row.id, sellerId: row.seller_id, privateKeyHash: row.private_key_hash, sellerBlocked: row.blocked, lastUseStale: row.stale }
      : null;
  }

  /**
   * Marks the pair used now, unless another request did within the last minute. Never waits for the
   * row: under a burst of one pair's requests, the one that holds it writes and the others skip
   * (SKIP LOCKED), so no request holds a pool connection waiting on another's lock.
   */
  async touchLastUsed(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = (SELECT id FROM api_keys
                     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
                     FOR UPDATE SKIP LOCKED)`,
      [id],
    );
  }

  /** Every pair of the seller, newest first. */
  async ofSeller(sellerId: number): Promise<ApiKeyEntity[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM api_keys WHERE seller_id = $1 ORDER BY id DESC', [sellerId]);
    return rows.map((row) => this.rows.hydrate(row));
  }

  async insert(
    sellerId: number,
    publicKey: string,
    privateKeyHash: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query('INSERT INTO api_keys (seller_id, public_key, private_key_hash) VALUES ($1, $2, $3)', [sellerId, publicKey, privateKeyHash]);
  }

  /** Marks the key revoked (only the seller's own when `sellerId` is given); false when no such unrevoked key. */
  async revokeIfActive(publicKey: string, sellerId?: number): Promise<boolean> {
    const [, affected]: [unknown, number] =
      sellerId === undefined
        ? await this.dataSource.query('UPDATE api_keys SET revoked_at = now() WHERE public_key = $1 AND revoked_at IS NULL', [publicKey])
        : await this.dataSource.query('UPDATE api_keys SET revoked_at = now() WHERE public_key = $1 AND revoked_at IS NULL AND seller_id = $2', [publicKey, sellerId]);
    return affected > 0;
  }
}
