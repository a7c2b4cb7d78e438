import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { Lease } from '../database/leases';
import { newestFirstPage, RowFilter } from '../database/list-queries';
import { PlainRows } from '../database/plain-rows';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity';
import { DeliveryStatus, EventObjectType, NotificationChannel, OutboxEventEntity } from './entities/outbox-event.entity';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';

/** An event to append to the outbox. */
export interface NewOutboxEvent {
  eventId: string;
  sellerId: number;
  channel: NotificationChannel;
  aggregateKey: string;
  url: string;
  signed: boolean;
  payload: Record<string, unknown>;
  eventType: string;
  objectType: EventObjectType | null;
  objectId: number | null;
  /** Numbered among its object's events (postbacks of sales and subscriptions). */
  sequenced: boolean;
}

/** Filters of the events API and the dashboard's deliveries view. */
export interface EventFilter {
  type?: string;
  objectType?: EventObjectType;
  objectId?: number;
  status?: DeliveryStatus;
  createdAfter?: Date;
  createdBefore?: Date;
}

export interface EndpointHealthRow {
  url: string;
  failingSince: Date | null;
  failuresSince: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  lastError: string | null;
}

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
  private readonly eventRows: PlainRows<OutboxEventEntity>;
  private readonly attemptRows: PlainRows<DeliveryAttemptEntity>;
  private readonly webhookRows: PlainRows<WithdrawalWebhookEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.eventRows = new PlainRows(dataSource.getMetadata(OutboxEventEntity));
    this.attemptRows = new PlainRows(dataSource.getMetadata(DeliveryAttemptEntity));
    this.webhookRows = new PlainRows(dataSource.getMetadata(WithdrawalWebhookEntity));
  }

  /**
   * Makes concurrent adds of one seller's webhooks take turns until the caller's transaction ends (a
   * transaction-level advisory lock), so that a count read after it stays true until the insert.
   */
  async lockWebhooksOf(sellerId: number, manager: EntityManager): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('withdrawal-webhooks'), $1)`, [sellerId]);
  }

  async countWebhooks(sellerId: number, manager: EntityManager): Promise<number> {
    const [row]: Array<{ total: string }> = await manager.query('SELECT count(*) AS total FROM withdrawal_webhooks WHERE seller_id = $1', [sellerId]);
    return Number(row.total);
  }

  /** Writes the webhook; the row as stored. */
  async insertWebhook(sellerId: number, url: string, manager: EntityManager): Promise<WithdrawalWebhookEntity> {
    const rows: Array<Record<string, unknown>> = await manager.query(
      `INSERT INTO withdrawal_webhooks (seller_id, url, type) VALUES ($1, $2, 'WITHDRAWAL') RETURNING *`,
      [sellerId, url],
    );
    return this.webhookRows.hydrate(rows[0]);
  }

  webhooksOf(sellerId: number): Promise<WithdrawalWebhookEntity[]> {
    return this.webhooksOfInTransaction(sellerId, this.dataSource.manager);
  }

  /** Deletes the seller's webhook; false when the seller has no webhook with this id. */
  async deleteWebhook(sellerId: number, webhookId: number): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query('DELETE FROM withdrawal_webhooks WHERE id = $1 AND seller_id = $2', [webhookId, sellerId]);
    return affected > 0;
  }

  /** The seller's webhooks, oldest first, read through `manager`. */
  async webhooksOfInTransaction(sellerId: number, manager: EntityManager): Promise<WithdrawalWebhookEntity[]> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM withdrawal_webhooks WHERE seller_id = $1 ORDER BY id', [sellerId]);
    return rows.map((row) => this.webhookRows.hydrate(row));
  }

  /**
   * Appends events to the outbox in the caller's transaction, in the order given, in one statement. A
   * `sequenced` event takes its object's next sequence from event_sequences (an upsert, so the events of
   * one object are numbered in commit order whatever runs at once) and carries it in its payload.
   */
  async insertEvents(events: NewOutboxEvent[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    if (events.length === 0) return;
    const statement = new CteStatement();
    this.addEvents(statement, events);
    await statement.run(manager, 'SELECT 1');
  }

  /** insertEvents' writes added to `statement`, made only while `gate` holds. */
  addEvents(statement: CteStatement, events: NewOutboxEvent[], gate = 'true'): void {
    const column = <K extends keyof NewOutboxEvent>(key: K, type: string) => `${statement.param(events.map((event) => event[key] ?? null))}::${type}[]`;
    const payloads = `${statement.param(events.map((event) => JSON.stringify(event.payload)))}::jsonb[]`;
    const input = statement.with(
      statement.name('event'),
      `SELECT * FROM unnest(${column('eventId', 'uuid')}, ${column('sellerId', 'int')}, ${column('channel', 'varchar')}, ${column('aggregateKey', 'varchar')},
                            ${column('url', 'varchar')}, ${column('signed', 'boolean')}, ${payloads}, ${column('eventType', 'varchar')},
                            ${column('objectType', 'varchar')}, ${column('objectId', 'bigint')}, ${column('sequenced', 'boolean')})
              WITH ORDINALITY AS i(event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, object_type, object_id, sequenced, ord)
        WHERE ${gate}`,
    );
    const counts = statement.with(
      statement.name('counts'),
      `SELECT object_type, object_id, count(*)::int AS n FROM ${input} WHERE sequenced GROUP BY object_type, object_id`,
    );
    const bumped = statement.with(
      statement.name('bumped'),
      `INSERT INTO event_sequences AS s (object_type, object_id, last)
       SELECT object_type, object_id, n FROM ${counts} ORDER BY object_type, object_id
       ON CONFLICT (object_type, object_id) DO UPDATE SET last = s.last + EXCLUDED.last
       RETURNING object_type, object_id, last`,
    );
    const numbered = statement.with(
      statement.name('numbered'),
      `SELECT i.*, b.last - c.n + row_number() OVER (PARTITION BY i.sequenced, i.object_type, i.object_id ORDER BY i.ord) AS sequence
         FROM ${input} i
         LEFT JOIN ${counts} c ON i.sequenced AND c.object_type = i.object_type AND c.object_id = i.object_id
         LEFT JOIN ${bumped} b ON i.sequenced AND b.object_type = i.object_type AND b.object_id = i.object_id`,
    );
    statement.with(
      statement.name('outbox'),
      `INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, object_type, object_id, sequence)
       SELECT event_id, seller_id, channel, aggregate_key, url, signed,
              CASE WHEN sequence IS NULL THEN payload ELSE payload || jsonb_build_object('sequence', sequence) END,
              event_type, object_type, object_id, sequence
         FROM ${numbered} ORDER BY ord`,
    );
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

  async findEvent(id: string): Promise<OutboxEventEntity | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM outbox_events WHERE id = $1', [id]);
    return rows.length === 0 ? null : this.eventRows.hydrate(rows[0]);
  }

  /**
   * Records a try and its outcome, if the event is still at the attempt that was tried, and the try in
   * its endpoint's run of failures: a success ends the run; a failure starts one, and a run older than
   * `failingAfterSeconds` marks the endpoint failing.
   */
  async recordAttempt(
    event: OutboxEventEntity,
    attempt: { attemptedAt: Date; responseStatus: number | null; error: string | null; durationMs: number; requestHeaders: Record<string, string> | null },
    outcome: { status: DeliveryStatus; nextAttemptAt: Date | null },
    failingAfterSeconds: number,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [, affected]: [unknown, number] = await manager.query(
        `UPDATE outbox_events
            SET status = $3::varchar, attempts = attempts + 1, next_attempt_at = COALESCE($4::timestamptz, next_attempt_at),
                enqueued_at = NULL, manual_try = false, last_error = $5, delivered_at = CASE WHEN $3::varchar = 'DELIVERED' THEN now() ELSE delivered_at END
          WHERE id = $1 AND attempts = $2 AND status = 'PENDING'`,
        [event.id, event.attempts, outcome.status, outcome.nextAttemptAt, attempt.error],
      );
      if (affected !== 1) return false;
      const [insertAttempt, attemptParameters] = this.attemptRows.insertStatement([{ outboxId: event.id, ...attempt }]);
      await manager.query(insertAttempt, attemptParameters);
      await manager.query(
        `INSERT INTO postback_endpoints AS p (seller_id, url, failures_since, last_success_at, last_failure_at, last_error)
         VALUES ($1, $2, CASE WHEN $3 THEN NULL ELSE now() END, CASE WHEN $3 THEN now() END, CASE WHEN $3 THEN NULL ELSE now() END, $4)
         ON CONFLICT (seller_id, url) DO UPDATE SET
           failures_since = CASE WHEN $3 THEN NULL ELSE COALESCE(p.failures_since, now()) END,
           failing_since = CASE WHEN $3 THEN NULL
                                WHEN COALESCE(p.failures_since, now()) <= now() - make_interval(secs => $5) THEN COALESCE(p.failing_since, now()) END,
           last_success_at = CASE WHEN $3 THEN now() ELSE p.last_success_at END,
           last_failure_at = CASE WHEN $3 THEN p.last_failure_at ELSE now() END,
           last_error = CASE WHEN $3 THEN p.last_error ELSE $4 END`,
        [event.sellerId, event.url, outcome.status === 'DELIVERED', attempt.error, failingAfterSeconds],
      );
      return true;
    });
  }

  /** The seller's newest `limit` events (in `status` when given), newest first. */
  async eventsOf(sellerId: number, status: DeliveryStatus | undefined, limit: number): Promise<OutboxEventEntity[]> {
    const rows: Array<Record<string, unknown>> = status
      ? await this.dataSource.query('SELECT * FROM outbox_events WHERE seller_id = $1 AND status = $2 ORDER BY id DESC LIMIT $3', [sellerId, status, limit])
      : await this.dataSource.query('SELECT * FROM outbox_events WHERE seller_id = $1 ORDER BY id DESC LIMIT $2', [sellerId, limit]);
    return rows.map((row) => this.eventRows.hydrate(row));
  }

  /**
   * A page of the seller's events, newest first (by outbox id, below `beforeId` when given), filtered, and
   * whether another page follows. Each filter is a range of one of the (seller_id, …, id) indexes, from
   * which the page's ids are read alone (newestFirstPage).
   */
  eventsPage(sellerId: number, filter: EventFilter, beforeId: string | null, limit: number): Promise<{ rows: OutboxEventEntity[]; more: boolean }> {
    const events = new RowFilter('outbox_events');
    events.where(`seller_id = ${events.param(sellerId)}`);
    if (filter.type) events.where(`event_type = ${events.param(filter.type)}`);
    if (filter.objectType) events.where(`object_type = ${events.param(filter.objectType)}`);
    if (filter.objectId !== undefined) events.where(`object_id = ${events.param(filter.objectId)}`);
    if (filter.status) events.where(`status = ${events.param(filter.status)}`);
    if (filter.createdAfter) events.where(`created_at >= ${events.param(filter.createdAfter)}`);
    if (filter.createdBefore) events.where(`created_at < ${events.param(filter.createdBefore)}`);
    return newestFirstPage(this.dataSource.manager, this.eventRows, events, beforeId !== null ? { beforeId } : { page: 1 }, limit);
  }

  async findEventOf(sellerId: number, eventId: string): Promise<OutboxEventEntity | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM outbox_events WHERE seller_id = $1 AND event_id = $2', [sellerId, eventId]);
    return rows.length === 0 ? null : this.eventRows.hydrate(rows[0]);
  }

  /**
   * Sends again now up to `limit` of the seller's events whose latest try failed in [since, until), oldest
   * first, each with its own id: a FAILED one gets one try (manual_try: its failure makes it FAILED
   * again), a PENDING one waiting for its next retry has that retry brought forward to now (the same
   * attempt, so the same Bull job id: never a second delivery beside it). An event already due, in
   * flight, or delivered is not touched, so asking twice sends nothing twice. Returns how many went back
   * and how many of the period are left.
   */
  async redeliverLatestFailed(sellerId: number, since: Date, until: Date, limit: number): Promise<{ requeued: number; remaining: number }> {
    const waiting = `(e.status = 'FAILED' OR (e.status = 'PENDING' AND e.attempts > 0 AND e.next_attempt_at > now()))`;
    const [row]: Array<{ requeued: number; remaining: number }> = await this.dataSource.query(
      `WITH candidates AS (
         SELECT e.id FROM outbox_events e
           LEFT JOIN LATERAL (SELECT a.attempted_at FROM delivery_attempts a WHERE a.outbox_id = e.id ORDER BY a.id DESC LIMIT 1) latest ON true
          WHERE e.seller_id = $1 AND ${waiting}
            AND COALESCE(latest.attempted_at, e.created_at) >= $2 AND COALESCE(latest.attempted_at, e.created_at) < $3
       ),
       picked AS (
         SELECT e.id FROM outbox_events e WHERE e.id IN (SELECT id FROM candidates) ORDER BY e.id LIMIT $4 FOR UPDATE SKIP LOCKED
       ),
       requeued AS (
         UPDATE outbox_events e
            SET manual_try = (e.status = 'FAILED'), status = 'PENDING', next_attempt_at = now(),
                enqueued_at = CASE WHEN e.status = 'FAILED' THEN NULL ELSE e.enqueued_at END
           FROM picked WHERE e.id = picked.id AND ${waiting}
         RETURNING e.id
       )
       SELECT (SELECT count(*)::int FROM requeued) AS requeued,
              (SELECT count(*)::int FROM candidates WHERE id NOT IN (SELECT id FROM requeued)) AS remaining`,
      [sellerId, since, until, limit],
    );
    return row;
  }

  /** The seller's postback and webhook URLs with their run of failures, failing ones first. */
  endpointsOf(sellerId: number): Promise<EndpointHealthRow[]> {
    return this.dataSource.query(
      `SELECT url, failing_since AS "failingSince", failures_since AS "failuresSince", last_success_at AS "lastSuccessAt",
              last_failure_at AS "lastFailureAt", last_error AS "lastError"
         FROM postback_endpoints WHERE seller_id = $1 ORDER BY failing_since IS NULL, url`,
      [sellerId],
    );
  }

  /** The delivery attempts of these events, in the order they were made. */
  async attemptsOf(outboxIds: string[]): Promise<DeliveryAttemptEntity[]> {
    if (outboxIds.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM delivery_attempts WHERE outbox_id = ANY($1::bigint[]) ORDER BY id', [outboxIds]);
    return rows.map((row) => this.attemptRows.hydrate(row));
  }

  /**
   * A seller's redelivery of one event, now, with its own id: a PENDING one has its next try brought
   * forward (its own schedule goes on); any other gets one try (manual_try), after which a failure makes
   * it FAILED again. Never a fresh retry schedule (issue 35, L4).
   */
  async redeliverOnce(id: string): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE outbox_events
          SET manual_try = CASE WHEN status = 'PENDING' THEN manual_try ELSE true END,
              enqueued_at = CASE WHEN status = 'PENDING' THEN enqueued_at END,
              next_attempt_at = CASE WHEN status = 'PENDING' THEN LEAST(next_attempt_at, now()) ELSE now() END,
              status = 'PENDING'
        WHERE id = $1`,
      [id],
    );
    return affected === 1;
  }

  /** The operator's redelivery: the event back in line with a fresh retry schedule. */
  async requeue(id: string): Promise<boolean> {
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE outbox_events SET status = 'PENDING', attempts = 0, next_attempt_at = now(), enqueued_at = NULL, retry_base_at = now(), manual_try = false
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
