import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { SellerEntity } from './entities/seller.entity';

/** Revenue of spec 2.9; amounts in cents. */
export interface RevenueCounters {
  totalAmount: number;
  totalCount: number;
  cardAmount: number;
  cardCount: number;
  pixAmount: number;
  pixCount: number;
  boletoAmount: number;
  boletoCount: number;
  chargebackAmount: number;
  chargebackCount: number;
  refundAmount: number;
  refundCount: number;
}

export type NewSeller = Pick<
  SellerEntity,
  'name' | 'email' | 'phone' | 'legalName' | 'commercialName' | 'invoiceDescriptor' | 'documentType' | 'documentNumber' | 'postbackSecretEncrypted'
> &
  Partial<SellerEntity>;

@Injectable()
export class SellerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(seller: NewSeller, manager: EntityManager = this.dataSource.manager): Promise<SellerEntity> {
    const repository = manager.getRepository(SellerEntity);
    const { identifiers } = await repository.insert(repository.create(seller));
    return repository.findOneByOrFail({ id: identifiers[0].id as number });
  }

  findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SellerEntity | null> {
    return manager.getRepository(SellerEntity).findOneBy({ id });
  }

  async emailTaken(email: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM sellers WHERE lower(email) = lower($1)', [email]);
    return rows.length > 0;
  }

  async update(id: number, patch: Partial<SellerEntity>, manager: EntityManager = this.dataSource.manager): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await manager.getRepository(SellerEntity).update({ id }, patch);
  }

  /** Revenue counters. Zero until the sales module records sales (its table arrives with it). */
  async revenueOf(_sellerId: number): Promise<RevenueCounters> {
    return {
      totalAmount: 0,
      totalCount: 0,
      cardAmount: 0,
      cardCount: 0,
      pixAmount: 0,
      pixCount: 0,
      boletoAmount: 0,
      boletoCount: 0,
      chargebackAmount: 0,
      chargebackCount: 0,
      refundAmount: 0,
      refundCount: 0,
    };
  }
}
