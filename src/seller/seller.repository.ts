import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { updateRows } from '../database/bulk-rows';
import { PlainRows, poolQuery } from '../database/plain-rows';
import { SellerEntity } from './entities/seller.entity';

export type NewSeller = Pick<
  SellerEntity,
  'name' | 'email' | 'phone' | 'legalName' | 'commercialName' | 'invoiceDescriptor' | 'documentType' | 'documentNumber' | 'postbackSecretEncrypted'
> &
  Partial<SellerEntity>;

export interface SealedPostbackSecrets {
  current: string;
  previous: string | null;
  previousExpiresAt: Date | null;
}

@Injectable()
export class SellerRepository {
  /** Sellers as entities, read and written in plain SQL (the seller is read by id on every sale and withdrawal). */
  private readonly sellerRows: PlainRows<SellerEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sellerRows = new PlainRows(dataSource.getMetadata(SellerEntity));
  }

  /** Writes the seller (a column it leaves out takes its default); the row as stored, without its sealed secrets. */
  async insert(seller: NewSeller, manager: EntityManager = this.dataSource.manager): Promise<SellerEntity> {
    const [insert, parameters] = this.sellerRows.insertStatement([seller]);
    const rows: Array<Record<string, unknown>> = await manager.query(`${insert} RETURNING ${this.sellerRows.columnList()}`, parameters);
    return this.sellerRows.hydrate(rows[0]);
  }

  async findById(id: number, manager?: EntityManager): Promise<SellerEntity | null> {
    const sql = 'SELECT * FROM sellers WHERE id = $1';
    // Outside a transaction (every sale reads its seller's profile), straight through the pool.
    const rows: Array<Record<string, unknown>> = manager ? await manager.query(sql, [id]) : await poolQuery(this.dataSource, sql, [id]);
    return rows.length === 0 ? null : this.sellerRows.hydrate(rows[0]);
  }

  /** The sellers with these ids, without their sealed secrets, in no particular order. */
  async findByIds(ids: number[], manager: EntityManager): Promise<SellerEntity[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await manager.query(`SELECT ${this.sellerRows.columnList()} FROM sellers WHERE id = ANY($1::int[])`, [ids]);
    return rows.map((row) => this.sellerRows.hydrate(row));
  }

  /** Those of `ids` that are blocked. */
  async blockedAmong(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: number }> = await this.dataSource.query('SELECT id FROM sellers WHERE id = ANY($1::int[]) AND blocked', [ids]);
    return rows.map((row) => row.id);
  }

  /** The sealed postback secrets: the current one, and the previous one while its overlap window lasts (null otherwise). */
  async postbackSecretsOf(id: number, manager: EntityManager = this.dataSource.manager, lock = false): Promise<SealedPostbackSecrets | null> {
    const rows: SealedPostbackSecrets[] = await manager.query(
      `SELECT postback_secret_encrypted AS current,
              CASE WHEN previous_postback_secret_expires_at > now() THEN previous_postback_secret_encrypted END AS previous,
              CASE WHEN previous_postback_secret_expires_at > now() THEN previous_postback_secret_expires_at END AS "previousExpiresAt"
         FROM sellers WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Makes `current` the signing secret and keeps `previous` until `previousExpiresAt` (both null: no overlap). */
  async setPostbackSecrets(id: number, secrets: SealedPostbackSecrets, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query(
      `UPDATE sellers SET postback_secret_encrypted = $2, previous_postback_secret_encrypted = $3, previous_postback_secret_expires_at = $4, updated_at = now()
        WHERE id = $1`,
      [id, secrets.current, secrets.previous, secrets.previousExpiresAt],
    );
  }

  /** Writes secrets sealed again under the current key; a null leaves that one as it is. */
  async resealPostbackSecrets(id: number, current: string | null, previous: string | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE sellers SET postback_secret_encrypted = COALESCE($2, postback_secret_encrypted),
              previous_postback_secret_encrypted = COALESCE($3, previous_postback_secret_encrypted) WHERE id = $1`,
      [id, current, previous],
    );
  }

  /** Every seller's sealed postback secrets (for re-encryption), the previous one whatever its window. */
  allSealedSecrets(): Promise<Array<{ id: number; sealed: string; previous: string | null }>> {
    return this.dataSource.query(
      `SELECT id, postback_secret_encrypted AS sealed, previous_postback_secret_encrypted AS previous FROM sellers ORDER BY id`,
    );
  }

  async emailTaken(email: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM sellers WHERE lower(email) = lower($1)', [email]);
    return rows.length > 0;
  }

  async update(id: number, patch: Partial<SellerEntity>, manager: EntityManager = this.dataSource.manager): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await updateRows(manager, SellerEntity, [{ id, changes: patch }]);
  }
}
