import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { cents } from '../domain/money';
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

  findByIds(ids: number[], manager: EntityManager): Promise<SellerEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return manager.getRepository(SellerEntity).findBy({ id: In(ids) });
  }

  /** The sealed postback secret (a column never selected by default). */
  async postbackSecretOf(id: number): Promise<string | null> {
    const row = await this.dataSource
      .getRepository(SellerEntity)
      .createQueryBuilder('seller')
      .select('seller.postbackSecretEncrypted', 'sealed')
      .where('seller.id = :id', { id })
      .getRawOne<{ sealed: string }>();
    return row?.sealed ?? null;
  }

  async emailTaken(email: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM sellers WHERE lower(email) = lower($1)', [email]);
    return rows.length > 0;
  }

  async update(id: number, patch: Partial<SellerEntity>, manager: EntityManager = this.dataSource.manager): Promise<void> {
    if (Object.keys(patch).length === 0) return;
    await manager.getRepository(SellerEntity).update({ id }, patch);
  }

  /**
   * Revenue counters (platform.md §7): gross amounts and counts of the sales that are PAGO now, by
   * method; confirmed chargebacks and refunds by their reversal reason. Each sale counts once.
   */
  async revenueOf(sellerId: number): Promise<RevenueCounters> {
    const [row]: Array<Record<keyof RevenueCounters, string>> = await this.dataSource.query(
      `SELECT
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO'), 0)                                              AS "totalAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO')                                                                    AS "totalCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD')), 0) AS "cardAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method IN ('CREDIT_CARD', 'DEBIT_CARD'))                AS "cardCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method = 'PIX'), 0)                   AS "pixAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method = 'PIX')                                         AS "pixCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO' AND payment_method = 'BOLETO'), 0)                AS "boletoAmount",
         COUNT(*) FILTER (WHERE status = 'PAGO' AND payment_method = 'BOLETO')                                      AS "boletoCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE reversal_reason = 'CHARGEBACK_CONFIRMED'), 0)                      AS "chargebackAmount",
         COUNT(*) FILTER (WHERE reversal_reason = 'CHARGEBACK_CONFIRMED')                                           AS "chargebackCount",
         COALESCE(SUM(amount_cents) FILTER (WHERE reversal_reason = 'REFUNDED'), 0)                                  AS "refundAmount",
         COUNT(*) FILTER (WHERE reversal_reason = 'REFUNDED')                                                       AS "refundCount"
       FROM sales WHERE seller_id = $1`,
      [sellerId],
    );
    return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, cents(Number(value))])) as unknown as RevenueCounters;
  }
}
