import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ApiKeyEntity } from './entities/api-key.entity';

export interface ActiveKeyWithSeller {
  sellerId: number;
  privateKeyHash: string;
  sellerBlocked: boolean;
}

@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The unrevoked key with this public key, with its seller's blocked flag; null when none. */
  async findActiveByPublicKey(publicKey: string): Promise<ActiveKeyWithSeller | null> {
    const rows: Array<{ seller_id: number; private_key_hash: string; blocked: boolean }> = await this.dataSource.query(
      `SELECT k.seller_id, k.private_key_hash, s.blocked
         FROM api_keys k JOIN sellers s ON s.id = k.seller_id
        WHERE k.public_key = $1 AND k.revoked_at IS NULL`,
      [publicKey],
    );
    const row = rows[0];
    return row ? { sellerId: row.seller_id, privateKeyHash: row.private_key_hash, sellerBlocked: row.blocked } : null;
  }

  async insert(
    sellerId: number,
    publicKey: string,
    privateKeyHash: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.getRepository(ApiKeyEntity).insert({ sellerId, publicKey, privateKeyHash });
  }

  /** Marks the key revoked; returns false when no unrevoked key has this public key. */
  async revokeIfActive(publicKey: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(ApiKeyEntity)
      .update({ publicKey, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return (result.affected ?? 0) > 0;
  }
}
