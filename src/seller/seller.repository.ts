import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { PlainRows } from '../database/plain-rows';
import { SellerEntity } from './entities/seller.entity';

export type NewSeller = Pick<
  SellerEntity,
  'name' | 'email' | 'phone' | 'legalName' | 'commercialName' | 'invoiceDescriptor' | 'documentType' | 'documentNumber' | 'postbackSecretEncrypted'
> &
  Partial<SellerEntity>;

@Injectable()
export class SellerRepository {
  /** The seller read by id on every sale and withdrawal, in plain SQL. */
  private readonly sellerRows: PlainRows<SellerEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sellerRows = new PlainRows(dataSource.getMetadata(SellerEntity));
  }

  async insert(seller: NewSeller, manager: EntityManager = this.dataSource.manager): Promise<SellerEntity> {
    const repository = manager.getRepository(SellerEntity);
    const { identifiers } = await repository.insert(repository.create(seller));
    return repository.findOneByOrFail({ id: identifiers[0].id as number });
  }

  async findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SellerEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM sellers WHERE id = $1', [id]);
    return rows.length === 0 ? null : this.sellerRows.hydrate(rows[0]);
  }

  findByIds(ids: number[], manager: EntityManager): Promise<SellerEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return manager.getRepository(SellerEntity).findBy({ id: In(ids) });
  }

  /** The sealed postback secret (a column never selected by default). */
  /** Those of `ids` that are blocked. */
  async blockedAmong(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: number }> = await this.dataSource.query('SELECT id FROM sellers WHERE id = ANY($1::int[]) AND blocked', [ids]);
    return rows.map((row) => row.id);
  }

  async postbackSecretOf(id: number): Promise<string | null> {
    const row = await this.dataSource
      .getRepository(SellerEntity)
      .createQueryBuilder('seller')
      .select('seller.postbackSecretEncrypted', 'sealed')
      .where('seller.id = :id', { id })
      .getRawOne<{ sealed: string }>();
    return row?.sealed ?? null;
  }

  /** Every seller's sealed postback secret (for re-encryption). */
  allSealedSecrets(): Promise<Array<{ id: number; sealed: string }>> {
    return this.dataSource.query(`SELECT id, postback_secret_encrypted AS sealed FROM sellers ORDER BY id`);
  }

  async emailTaken(email: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM sellers WHERE lower(email) = lower($1)', [email]);
    return rows.length > 0;
  }

  async update(id: number, patch: Partial<SellerEntity>, manager: EntityManager = this.dataSource.manager): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await manager.getRepository(SellerEntity).update({ id }, patch);
  }
}
