import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { SubscriptionStatus } from '../domain/subscription-status';
import { SubscriptionEntity } from './entities/subscription.entity';
import { containsPattern, createdRangePage } from '../database/list-queries';

export interface SubscriptionFilters {
  status?: SubscriptionStatus;
  search?: string;
  /** Inclusive lower and exclusive upper bounds of created_at. */
  createdFrom?: Date;
  createdBefore?: Date;
}

@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(subscription: Partial<SubscriptionEntity>, manager: EntityManager): Promise<number> {
    const { identifiers } = await manager.getRepository(SubscriptionEntity).insert(subscription as QueryDeepPartialEntity<SubscriptionEntity>);
    return identifiers[0].id as number;
  }

  findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SubscriptionEntity | null> {
    return manager.getRepository(SubscriptionEntity).findOneBy({ id });
  }

  /** Locked for the transaction, with its card token. */
  findByIdForUpdate(id: number, manager: EntityManager): Promise<SubscriptionEntity | null> {
    return manager
      .getRepository(SubscriptionEntity)
      .createQueryBuilder('s')
      .addSelect('s.cardToken')
      .where('s.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
  }

  async update(id: number, changes: Partial<SubscriptionEntity>, manager: EntityManager): Promise<void> {
    await manager.getRepository(SubscriptionEntity).update({ id }, changes as QueryDeepPartialEntity<SubscriptionEntity>);
  }

  /** One page of the seller's subscriptions, newest first, and how many match in all. */
  async page(sellerId: number, filters: SubscriptionFilters, page: number, limit: number): Promise<{ rows: SubscriptionEntity[]; total: number }> {
    const query = this.dataSource.getRepository(SubscriptionEntity).createQueryBuilder('s').where('s.seller_id = :sellerId', { sellerId });
    if (filters.status) query.andWhere('s.status = :status', { status: filters.status });
    if (filters.search) {
      const pattern = containsPattern(filters.search);
      query.andWhere('(s.customer_email ILIKE :pattern OR s.customer_name ILIKE :pattern)', { pattern });
    }
    return createdRangePage(query, filters, page, limit);
  }

  /** What the metrics need of every subscription of the seller. */
  metricsRows(sellerId: number): Promise<SubscriptionEntity[]> {
    return this.dataSource
      .getRepository(SubscriptionEntity)
      .createQueryBuilder('s')
      .select(['s.id', 's.status', 's.amountCents', 's.billingCycle', 's.cancelledAt'])
      .where('s.seller_id = :sellerId', { sellerId })
      .getMany();
  }

  /**
   * Ids of subscriptions with billing work due at `now` (a renewal, a retry, a scheduled cancellation, a
   * grace period or a PIX renewal overdue), each leased to this worker until it is released (or for a
   * minute if the worker dies), with FOR UPDATE SKIP LOCKED so that instances share the work.
   */
  async claimDue(now: Date, sellerId: number | null, graceDays: number, overdueDays: number, limit: number): Promise<number[]> {
    const [rows]: [Array<{ id: number }>] = await this.dataSource.query(
      `UPDATE subscriptions SET billing_claimed_at = now()
        WHERE id IN (
          SELECT id FROM subscriptions
           WHERE status IN ('ACTIVE', 'TRIALING', 'PAST_DUE') AND ($2::int IS NULL OR seller_id = $2)
             AND (billing_claimed_at IS NULL OR billing_claimed_at < now() - interval '1 minute')
             AND LEAST(next_billing_date, scheduled_cancellation_date, next_retry_at,
                       past_due_since + make_interval(days => $3), awaiting_payment_since + make_interval(days => $4)) <= $1
           ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)
        RETURNING id`,
      [now, sellerId, graceDays, overdueDays, limit],
    );
    return rows.map((row) => row.id);
  }

  async releaseClaim(id: number): Promise<void> {
    await this.dataSource.query(`UPDATE subscriptions SET billing_claimed_at = NULL WHERE id = $1`, [id]);
  }
}
