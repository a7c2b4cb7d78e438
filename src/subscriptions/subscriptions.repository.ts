import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isStopped } from '../domain/subscription-outcome';
import { isFinalSubscriptionStatus, SUBSCRIPTION_STATUSES, SubscriptionStatus } from '../domain/subscription-status';

import { SubscriptionEntity } from './entities/subscription.entity';
import { addRowUpdates, updateRows } from '../database/bulk-rows';
import { CteStatement } from '../database/cte-statement';
import { PlainRows } from '../database/plain-rows';
import { Lease } from '../database/leases';
import { containsPattern, countMatching, createdWithin, newestFirstPage, PagePosition, RowFilter } from '../database/list-queries';
import { addDays } from '../domain/dates';
import { AUTOMATIC_PIX_LEAD_DAYS, AutomaticPixStatus } from '../domain/automatic-pix';

/** Statuses the billing no longer charges: stopped (cancelled, paused) or final, from the domain's table. */
const NOT_BILLED = SUBSCRIPTION_STATUSES.filter((status) => isStopped(status) || isFinalSubscriptionStatus(status));

export interface SubscriptionFilters {
  status?: SubscriptionStatus;
  search?: string;
  /** Inclusive lower and exclusive upper bounds of created_at. */
  createdFrom?: Date;
  createdBefore?: Date;
}

/**
 * The earliest date the billing sets itself on which dueBillingAction has an action for an ACTIVE,
 * TRIALING or PAST_DUE subscription: its scheduled cancellation; while PAST_DUE, its card's next retry;
 * otherwise, unless a PIX renewal awaits payment, its next billing date. Indexed as written here
 * (subscriptions_billing_due_idx).
 */
const BILLING_DUE_AT = `LEAST(scheduled_cancellation_date,
  CASE WHEN status = 'PAST_DUE' THEN CASE WHEN payment_method = 'CREDIT_CARD' THEN next_retry_at END
       WHEN awaiting_payment_since IS NULL THEN next_billing_date END)`;

/** The billing job's lease on a subscription (billing_claimed_at): held while it is billed, a minute if the worker dies. */
const BILLING_LEASE = new Lease({ table: 'subscriptions', column: 'billing_claimed_at', duration: '1 minute' });

/** How often a Pix Automático authorization still waiting for the payer is asked about (the webhook is the fast path). */
const AUTOMATIC_PIX_AUTHORIZATION_POLL = new Lease({ table: 'subscriptions', column: 'automatic_pix_checked_at', duration: '1 minute' });
/** An authorized recurrence is asked about hourly: the net under the webhook for a payer who revokes it in their bank. */
const AUTOMATIC_PIX_AUTHORIZED_POLL = new Lease({ table: 'subscriptions', column: 'automatic_pix_checked_at', duration: '1 hour' });

const UNCLAIMED = `($2::int IS NULL OR seller_id = $2) AND ${BILLING_LEASE.free()} AND id <> ALL($6::int[])`;

/**
 * The conditions of each kind of billing work due, over the SQL of `at` (the billing's now), of the
 * grace period's start (`at` − grace days), of a PIX renewal's overdue start (`at` − overdue days) and of
 * the Pix Automático lead's end (`at` + AUTOMATIC_PIX_LEAD_DAYS): together, exactly the rows for which
 * dueBillingAction answers an action at `at` (or AutomaticPixService has a charge to send).
 */
const dueConditions = (at: string, graceFrom: string, overdueFrom: string, leadUntil: string) => ({
  byDate: `status IN ('ACTIVE', 'TRIALING', 'PAST_DUE') AND ${BILLING_DUE_AT} <= ${at}`,
  graceEnded: `status = 'PAST_DUE' AND past_due_since <= ${graceFrom}`,
  overdue: `status IN ('ACTIVE', 'TRIALING') AND awaiting_payment_since IS NOT NULL AND awaiting_payment_since <= ${overdueFrom}`,
  automatic: `automatic_pix_status = 'AUTHORIZED' AND status IN ('ACTIVE', 'TRIALING') AND awaiting_payment_since IS NULL AND next_billing_date <= ${leadUntil}`,
});

const CLAIM_DUE = dueConditions('$1', '$3', '$4', '$7');

/**
 * Ids of at most $5 subscriptions (of seller $2, or of all when null) with billing work due at $1, locked
 * (SKIP LOCKED), not leased and not among $6 (those the run billed already): by BILLING_DUE_AT, by a grace
 * period ended ($3: $1 − grace days) and by a PIX renewal overdue ($4: $1 − overdue days), each read
 * through its index in the order it fell due; and Pix Automático renewals due within the lead ($7: $1 +
 * AUTOMATIC_PIX_LEAD_DAYS), sent to the PSP before their due date.
 */
export const DUE_FOR_BILLING = `
  WITH by_date AS (
         SELECT id FROM subscriptions
          WHERE ${CLAIM_DUE.byDate} AND ${UNCLAIMED}
          ORDER BY ${BILLING_DUE_AT} LIMIT $5 FOR UPDATE SKIP LOCKED),
       grace_ended AS (
         SELECT id FROM subscriptions
          WHERE ${CLAIM_DUE.graceEnded} AND ${UNCLAIMED}
          ORDER BY past_due_since LIMIT $5 FOR UPDATE SKIP LOCKED),
       overdue AS (
         SELECT id FROM subscriptions
          WHERE ${CLAIM_DUE.overdue} AND ${UNCLAIMED}
          ORDER BY awaiting_payment_since LIMIT $5 FOR UPDATE SKIP LOCKED),
       automatic AS (
         SELECT id FROM subscriptions
          WHERE ${CLAIM_DUE.automatic} AND ${UNCLAIMED}
          ORDER BY next_billing_date LIMIT $5 FOR UPDATE SKIP LOCKED)
  SELECT id FROM (SELECT id FROM by_date UNION SELECT id FROM grace_ended UNION SELECT id FROM overdue UNION SELECT id FROM automatic) AS due ORDER BY id LIMIT $5`;

/** Those of subscriptions $1 with billing work due at $2 (grace from $3, overdue from $4, lead until $5), whole, in id order. */
const STILL_DUE = (() => {
  const due = dueConditions('$2', '$3', '$4', '$5');
  return `SELECT * FROM subscriptions WHERE id = ANY($1::int[])
             AND ((${due.byDate}) OR (${due.graceEnded}) OR (${due.overdue}) OR (${due.automatic}))
           ORDER BY id`;
})();

@Injectable()
export class SubscriptionsRepository {
  private readonly rows: PlainRows<SubscriptionEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new PlainRows(dataSource.getMetadata(SubscriptionEntity));
  }

  /** Subscriptions' sealed card tokens after `afterId`, `limit` at a time in id order (for re-encryption after a key rotation). */
  sealedCardTokens(afterId: number, limit: number): Promise<Array<{ id: number; sealed: string }>> {
    return this.dataSource.query(
      `SELECT id, card_token_sealed AS sealed FROM subscriptions WHERE card_token_sealed IS NOT NULL AND id > $1 ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
  }

  /** A sealed card token replaced by the same token sealed again, unless it changed meanwhile (a renewal's NewCard): whether it was. */
  async resealCardToken(id: number, was: string, sealed: string): Promise<boolean> {
    const [, affected] = (await this.dataSource.query(`UPDATE subscriptions SET card_token_sealed = $3 WHERE id = $1 AND card_token_sealed = $2`, [id, was, sealed])) as [unknown, number];
    return affected === 1;
  }

  /**
   * The id of the product a new subscription is for (spec 2.6 `product.id`, never null): the seller's own
   * productId, recorded in its catalog; without one, the product the gateway keeps for the item's title,
   * created on first use (one above the highest id of the seller's catalog) and reused after. A
   * concurrent creation of the same new id or title makes the insert do nothing; the next round reads
   * what that one committed.
   */
  async productIdFor(sellerId: number, title: string, sellerProductId: number | null, manager: EntityManager): Promise<number> {
    if (sellerProductId !== null) {
      await manager.query(
        `INSERT INTO subscription_products (seller_id, id, name, assigned_by_gateway) VALUES ($1, $2, $3, false) ON CONFLICT DO NOTHING`,
        [sellerId, sellerProductId, title],
      );
      return sellerProductId;
    }
    for (let round = 0; round < 10; round += 1) {
      const rows: Array<{ id: number }> = await manager.query(
        `WITH kept AS (SELECT id FROM subscription_products WHERE seller_id = $1 AND name = $2 AND assigned_by_gateway),
              created AS (
                INSERT INTO subscription_products (seller_id, id, name, assigned_by_gateway)
                SELECT $1, COALESCE((SELECT max(id) FROM subscription_products WHERE seller_id = $1), 0) + 1, $2, true
                 WHERE NOT EXISTS (SELECT 1 FROM kept)
                ON CONFLICT DO NOTHING RETURNING id)
         SELECT id FROM kept UNION ALL SELECT id FROM created`,
        [sellerId, title],
      );
      if (rows.length > 0) return rows[0].id;
    }
    throw new Error(`No product id for seller ${sellerId} after 10 rounds of concurrent creations`);
  }

  /** Writes the subscription (a column it leaves out takes its default); its id. */
  async insert(subscription: Partial<SubscriptionEntity>, manager: EntityManager): Promise<number> {
    const [insert, parameters] = this.rows.insertStatement([subscription]);
    const [row]: Array<{ id: number }> = await manager.query(`${insert} RETURNING id`, parameters);
    return row.id;
  }

  /** The subscription, without its card token. */
  async findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SubscriptionEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query(`SELECT ${this.rows.columnList()} FROM subscriptions WHERE id = $1`, [id]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0]);
  }

  /** Locked for the transaction, with its card token. */
  async findByIdForUpdate(id: number, manager: EntityManager): Promise<SubscriptionEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM subscriptions WHERE id = $1 FOR UPDATE', [id]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0], true);
  }

  /** The subscription's changes (a property left undefined is not written), its updated_at set to now(). */
  async update(id: number, changes: Partial<SubscriptionEntity>, manager: EntityManager): Promise<void> {
    await updateRows(manager, SubscriptionEntity, [{ id, changes }]);
  }

  /**
   * One page of the seller's subscriptions, newest first, whether more follow, and how many match in all
   * when `count` (the first page's; a cursor's pages carry it): by status alone, the seller's rows of
   * subscription_counts; with a search or dates, a read of every match. A cursor's page is one range of
   * subscriptions_seller_idx (seller_id, id), whatever its depth.
   */
  async page(
    sellerId: number,
    filters: SubscriptionFilters,
    position: PagePosition,
    limit: number,
    count: boolean,
  ): Promise<{ rows: SubscriptionEntity[]; more: boolean; total: number | null }> {
    const filter = new RowFilter('subscriptions');
    filter.where(`seller_id = ${filter.param(sellerId)}`);
    if (filters.status) filter.where(`status = ${filter.param(filters.status)}`);
    if (filters.search) {
      const pattern = filter.param(containsPattern(filters.search));
      filter.where(`(customer_email ILIKE ${pattern} OR customer_name ILIKE ${pattern})`);
    }
    createdWithin(filter, filters);
    const counted = filters.search === undefined && filters.createdFrom === undefined && filters.createdBefore === undefined;
    const total = !count ? null : counted ? await this.countOf(sellerId, filters.status) : await countMatching(this.dataSource.manager, filter);
    return { ...(await newestFirstPage(this.dataSource.manager, this.rows, filter, position, limit)), total };
  }

  /**
   * How many subscriptions the seller has (in `status`, or in all): the sum of its rows of
   * subscription_counts, which the table's triggers append to in the transaction of every change
   * (migration CountSubscriptionsPerSeller): an index-only range of a few rows, whatever the seller's size.
   */
  async countOf(sellerId: number, status?: SubscriptionStatus): Promise<number> {
    const [row]: Array<{ total: string }> = await this.dataSource.query(
      'SELECT COALESCE(sum(delta), 0) AS total FROM subscription_counts WHERE seller_id = $1 AND ($2::varchar IS NULL OR status = $2)',
      [sellerId, status ?? null],
    );
    return Number(row.total);
  }

  /**
   * Each (seller, status) with more than one row in subscription_counts folded into one row of their sum
   * (none when it is zero), in one statement; answers how many rows went. The rows it folds are those of
   * its snapshot: a row appended meanwhile stays for the next pass, and two passes at once fold each row
   * once (the second skips the rows the first deleted).
   */
  async compactCounts(): Promise<number> {
    const rows: Array<{ folded: string }> = await this.dataSource.query(
      `WITH crowded AS (
         SELECT seller_id, status FROM subscription_counts GROUP BY seller_id, status HAVING count(*) > 1),
       gone AS (
         DELETE FROM subscription_counts c USING crowded
          WHERE c.seller_id = crowded.seller_id AND c.status = crowded.status
         RETURNING c.seller_id, c.status, c.delta),
       folded AS (
         INSERT INTO subscription_counts (seller_id, status, delta)
         SELECT seller_id, status, sum(delta) FROM gone GROUP BY seller_id, status HAVING sum(delta) <> 0 ORDER BY seller_id, status)
       SELECT count(*) AS folded FROM gone`,
    );
    return Number(rows[0].folded);
  }

  /** What the metrics need of every subscription of the seller. */
  async metricsRows(sellerId: number): Promise<SubscriptionEntity[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT id, status, amount_cents, billing_cycle, cancelled_at FROM subscriptions WHERE seller_id = $1',
      [sellerId],
    );
    return rows.map((row) => this.rows.hydrate(row));
  }

  /**
   * Ids of subscriptions with billing work due at `now` (a renewal, a retry, a scheduled cancellation, a
   * grace period or a PIX renewal overdue: exactly those for which dueBillingAction answers an action),
   * each leased to this worker until it is released (or for a minute if the worker dies), with FOR
   * UPDATE SKIP LOCKED so that instances share the work. Each kind of date is read through its own index
   * in the order it fell due (migration AddSubscriptionBillingDueIndexes): a claim costs the batch it
   * takes, whatever the size of the table. `excluded` (those a run has billed already, and left still
   * due when their billing failed or was skipped) are passed over, so that they never fill a batch in
   * place of the subscriptions due after them.
   */
  async claimDue(now: Date, sellerId: number | null, graceDays: number, overdueDays: number, limit: number, excluded: readonly number[] = []): Promise<number[]> {
    const rows = await BILLING_LEASE.claim(
      this.dataSource,
      DUE_FOR_BILLING,
      [now, sellerId, addDays(now, -graceDays), addDays(now, -overdueDays), limit, excluded, addDays(now, AUTOMATIC_PIX_LEAD_DAYS)],
    );
    return rows.map((row) => row.id);
  }

  // ---- batches (the billing job) ----

  /** The seller of each of these subscriptions. */
  async sellersOf(ids: number[]): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows: Array<{ id: number; seller_id: number }> = await this.dataSource.query('SELECT id, seller_id FROM subscriptions WHERE id = ANY($1::int[])', [ids]);
    return new Map(rows.map((row) => [row.id, row.seller_id]));
  }

  /** The subscriptions with these ids, with their card tokens, in id order (one plain query: a billing batch reads 500). */
  async findByIds(ids: number[], manager: EntityManager = this.dataSource.manager): Promise<SubscriptionEntity[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM subscriptions WHERE id = ANY($1::int[]) ORDER BY id', [ids]);
    return rows.map((row) => this.rows.hydrate(row, true));
  }

  /**
   * Those of these subscriptions with billing work due at `now` (claimDue's conditions), with their card
   * tokens, in id order: a billing round reads whole only the rows it has work for, not those its last
   * round moved past `now` (a batch's renewals, in its round after them).
   */
  async findDueAmong(ids: number[], now: Date, graceDays: number, overdueDays: number): Promise<SubscriptionEntity[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(STILL_DUE, [
      ids,
      now,
      addDays(now, -graceDays),
      addDays(now, -overdueDays),
      addDays(now, AUTOMATIC_PIX_LEAD_DAYS),
    ]);
    return rows.map((row) => this.rows.hydrate(row, true));
  }

  /** Those of `ids` no longer billed (stopped, or in a final status of the table): one indexed read, without a lock. */
  async stoppedAmong(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: number }> = await this.dataSource.query(`SELECT id FROM subscriptions WHERE id = ANY($1::int[]) AND status = ANY($2::varchar[])`, [
      ids,
      NOT_BILLED,
    ]);
    return rows.map((row) => row.id);
  }

  /**
   * The subscriptions with these ids, with their card tokens, locked for the transaction in id order (one
   * plain query: TypeORM's hydration of a billing batch's 500 rows cost more CPU than the statement).
   */
  async findByIdsForUpdate(ids: number[], manager: EntityManager): Promise<SubscriptionEntity[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM subscriptions WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE', [ids]);
    return rows.map((row) => this.rows.hydrate(row, true));
  }

  /** Each subscription's own changes added to `statement` (one UPDATE per set of changed columns), written only while `gate` holds. */
  addUpdates(statement: CteStatement, updates: Array<{ id: number; changes: Partial<SubscriptionEntity> }>, gate: string): void {
    if (updates.length > 0) addRowUpdates(statement, this.dataSource.getMetadata(SubscriptionEntity), updates, { gate });
  }

  /**
   * Stored cards' acquirer tokens, sealed (payments/stored-card-token.ts): the card a first charge saved, or
   * the issuer's replacement a renewal's answer gave; in the caller's transaction (the charge's move).
   */
  /** Each subscription's sealed card token, with the card it is of when it replaced another (the issuer's NewCard: its last four and brand). */
  async saveSealedCardTokens(tokens: Array<{ subscriptionId: number; sealed: string; card?: { lastFour: string; brand: string } | null }>, manager: EntityManager): Promise<void> {
    if (tokens.length === 0) return;
    await manager.query(
      `UPDATE subscriptions s SET card_token_sealed = t.sealed, card_last_four = COALESCE(t.last_four, s.card_last_four), card_brand = COALESCE(t.brand, s.card_brand)
         FROM jsonb_to_recordset($1::jsonb) AS t(id int, sealed text, last_four text, brand text) WHERE s.id = t.id`,
      [JSON.stringify(tokens.map(({ subscriptionId, sealed, card }) => ({ id: subscriptionId, sealed, last_four: card?.lastFour ?? null, brand: card?.brand ?? null })))],
    );
  }

  async releaseClaims(ids: number[]): Promise<void> {
    await BILLING_LEASE.release(this.dataSource, ids);
  }

  // ---- Pix Automático authorizations (AutomaticPixService) ----

  /**
   * Subscriptions whose authorization is to be asked about, each leased: those waiting for the payer and
   * those stopped here whose authorization is still live at the PSP (a minute), and the authorized ones
   * (an hour).
   */
  async claimAutomaticPixAuthorizationsToCheck(sellerId: number | null, limit: number, providers: readonly string[]): Promise<number[]> {
    const pending = await AUTOMATIC_PIX_AUTHORIZATION_POLL.claim(
      this.dataSource,
      `SELECT id FROM subscriptions
        WHERE (automatic_pix_status = 'PENDING' OR (automatic_pix_status = 'AUTHORIZED' AND status IN ('CANCELLED', 'EXPIRED')))
          AND automatic_pix_recurrence_id IS NOT NULL AND ($1::int IS NULL OR seller_id = $1) AND provider = ANY($3::varchar[]) AND ${AUTOMATIC_PIX_AUTHORIZATION_POLL.free()}
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit, providers],
    );
    const authorized = await AUTOMATIC_PIX_AUTHORIZED_POLL.claim(
      this.dataSource,
      `SELECT id FROM subscriptions
        WHERE automatic_pix_status = 'AUTHORIZED' AND automatic_pix_recurrence_id IS NOT NULL AND ($1::int IS NULL OR seller_id = $1) AND provider = ANY($3::varchar[])
          AND ${AUTOMATIC_PIX_AUTHORIZED_POLL.free()}
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit, providers],
    );
    return [...new Set([...pending, ...authorized].map((row) => row.id))];
  }

  /** The authorization's new state, in the caller's transaction; the subscription's updated_at is `at` (the change's now, as its postback says). */
  async saveAutomaticPixAuthorization(
    subscriptionId: number,
    change: { status: AutomaticPixStatus; authorizedAt?: Date; endedAt?: Date; endReason?: string },
    at: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE subscriptions SET automatic_pix_status = $2, automatic_pix_authorized_at = COALESCE($3, automatic_pix_authorized_at),
              automatic_pix_ended_at = COALESCE($4, automatic_pix_ended_at), automatic_pix_end_reason = COALESCE($5, automatic_pix_end_reason),
              updated_at = $6
        WHERE id = $1`,
      [subscriptionId, change.status, change.authorizedAt ?? null, change.endedAt ?? null, change.endReason ?? null, at],
    );
  }
}
