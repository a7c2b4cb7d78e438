import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Lease } from '../database/leases';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity';
import { DeliveryStatus, OutboxEventEntity } from './entities/outbox-event.entity';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';

/** An enqueued delivery: which outbox row, at which attempt (part of the job id). */
export interface DueEvent {
  id: string;
  attempts: number;
}

/**
 * The relay's lease on an outbox event (enqueued_at): taken when the event is handed to the queue, for
 * the claim's `staleSeconds` (its parameter $2), so that a job lost with Redis is handed over again.
 */
const ENQUEUED_LEASE = new Lease({ table: 'outbox_events', column: 'enqueued_at', idType: 'bigint', duration: { secondsParam: 2 } });

@Injectable()
export class NotificationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get webhooks() {
    return this.dataSource.getRepository(WithdrawalWebhookEntity);
  }

  /**
   * Makes concurrent adds of one seller's webhooks take turns until the caller's transaction ends (a
   * transaction-level advisory lock), so that a count read after it stays true until the insert.
   */
  async lockWebhooksOf(sellerId: number, manager: EntityManager): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('withdrawal-webhooks'), $1)`, [sellerId]);
  }

  async countWebhooks(sellerId: number, manager: EntityManager): Promise<number> {
    return manager.getRepository(WithdrawalWebhookEntity).countBy({ sellerId });
  }

  async insertWebhook(sellerId: number, url: string, manager: EntityManager): Promise<WithdrawalWebhookEntity> {
    const webhooks = manager.getRepository(WithdrawalWebhookEntity);
    const { identifiers } = await webhooks.insert({ sellerId, url, type: 'WITHDRAWAL' });
    return webhooks.findOneByOrFail({ id: identifiers[0].id as number });
  }

  webhooksOf(sellerId: number): Promise<WithdrawalWebhookEntity[]> {
    return this.webhooks.find({ where: { sellerId }, order: { id: 'ASC' } });
  }

  /** Deletes the seller's webhook; false when the seller has no webhook with this id. */
  async deleteWebhook(sellerId: number, webhookId: number): Promise<boolean> {
    const result = await this.webhooks.delete({ id: webhookId, sellerId });
    return (result.affected ?? 0) > 0;
  }

  webhooksOfInTransaction(sellerId: number, manager: EntityManager): Promise<WithdrawalWebhookEntity[]> {
    return manager.getRepository(WithdrawalWebhookEntity).find({ where: { sellerId }, order: { id: 'ASC' } });
  }

  /** One event outside any other unit of work (a test delivery). */
  async insertEvent(event: Partial<OutboxEventEntity>): Promise<void> {
    await this.dataSource.getRepository(OutboxEventEntity).insert(event as QueryDeepPartialEntity<OutboxEventEntity>);
  }

  async insertEvents(events: Array<Partial<OutboxEventEntity>>, manager: EntityManager): Promise<void> {
    if (events.length > 0) await manager.getRepository(OutboxEventEntity).insert(events as QueryDeepPartialEntity<OutboxEventEntity>[]);
  }

  /**
   * Marks up to `limit` due events as enqueued and returns them: PENDING, due, not enqueued in the last
   * `staleSeconds` (a job lost with Redis is enqueued again), and first in line for their aggregate, so
   * one sale's events go out one at a time in order. SKIP LOCKED lets several relays share the work.
   */
  async claimDue(limit: number, staleSeconds: number): Promise<DueEvent[]> {
    const rows = await ENQUEUED_LEASE.claim<{ id: string; attempts: number }>(
      this.dataSource,
      `SELECT e.id FROM outbox_events e
        WHERE e.status = 'PENDING' AND e.next_attempt_at <= now()
          AND ${ENQUEUED_LEASE.free('e')}
          AND NOT EXISTS (SELECT 1 FROM outbox_events p
                           WHERE p.aggregate_key = e.aggregate_key AND p.status = 'PENDING' AND p.id < e.id)
        ORDER BY e.id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit, staleSeconds],
      ['id', 'attempts'],
    );
    return rows.map((row) => ({ id: String(row.id), attempts: row.attempts }));
  }

  async releaseClaims(ids: string[]): Promise<void> {
    await ENQUEUED_LEASE.release(this.dataSource, ids);
  }

  findEvent(id: string): Promise<OutboxEventEntity | null> {
    return this.dataSource.getRepository(OutboxEventEntity).findOneBy({ id });
  }

  /** Records a try and its outcome, if the event is still at the attempt that was tried. */
  async recordAttempt(
    event: OutboxEventEntity,
    attempt: { attemptedAt: Date; responseStatus: number | null; error: string | null; durationMs: number },
    outcome: { status: DeliveryStatus; nextAttemptAt: Date | null },
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [, affected]: [unknown, number] = await manager.query(
        `UPDATE outbox_events
            SET status = $3::varchar, attempts = attempts + 1, next_attempt_at = COALESCE($4::timestamptz, next_attempt_at),
                enqueued_at = NULL, last_error = $5, delivered_at = CASE WHEN $3::varchar = 'DELIVERED' THEN now() ELSE delivered_at END
          WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
        [event.id, event.attempts, outcome.status, outcome.nextAttemptAt, attempt.error],
      );
      if (affected !== 1) return false;
      await manager.getRepository(DeliveryAttemptEntity).insert({ outboxId: event.id, ...attempt });
      return true;
    });
  }

  eventsOf(sellerId: number, status: DeliveryStatus | undefined, limit: number): Promise<OutboxEventEntity[]> {
    return this.dataSource.getRepository(OutboxEventEntity).find({
      where: { sellerId, ...(status ? { status } : {}) },
      order: { id: 'DESC' },
      take: limit,
    });
  }

  attemptsOf(outboxIds: string[]): Promise<DeliveryAttemptEntity[]> {
    if (outboxIds.length === 0) return Promise.resolve([]);
    return this.dataSource
      .getRepository(DeliveryAttemptEntity)
      .createQueryBuilder('a')
      .where('a.outbox_id IN (:...ids)', { ids: outboxIds })
      .orderBy('a.id', 'ASC')
      .getMany();
  }

  /** Puts an event back in line for delivery, with a fresh retry schedule. */
  async requeue(id: string): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE outbox_events SET status = 'PENDING', attempts = 0, next_attempt_at = now(), enqueued_at = NULL, retry_base_at = now()
        WHERE id = $1`,
      [id],
    );
    return affected === 1;
  }

  /**
   * Deletes up to `limit` events DELIVERED before `before`, with their delivery attempts, in one
   * transaction under an advisory lock (one instance at a time; others skip). Failed and pending events
   * are kept. Returns how many events went.
   */
  async purgeDelivered(before: Date, limit: number): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }]: Array<{ locked: boolean }> = await manager.query(`SELECT pg_try_advisory_xact_lock(hashtext('outbox-retention')) AS locked`);
      if (!locked) return 0;
      const rows: Array<{ id: string }> = await manager.query(
        `SELECT id FROM outbox_events WHERE status = 'DELIVERED' AND delivered_at < $1 ORDER BY delivered_at LIMIT $2`,
        [before, limit],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((row) => row.id);
      await manager.query(`DELETE FROM delivery_attempts WHERE outbox_id = ANY($1::bigint[])`, [ids]);
      await manager.query(`DELETE FROM outbox_events WHERE id = ANY($1::bigint[])`, [ids]);
      return ids.length;
    });
  }

  /** How many events wait to be delivered, and the age in seconds (database clock) of the oldest. */
  async pendingBacklog(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const [row]: Array<{ pending: string; oldest_age_seconds: string | null }> = await this.dataSource.query(
      `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(created_at)) AS oldest_age_seconds FROM outbox_events WHERE status = 'PENDING'`,
    );
    return { pending: Number(row.pending), oldestAgeSeconds: row.oldest_age_seconds === null ? 0 : Number(row.oldest_age_seconds) };
  }
}
