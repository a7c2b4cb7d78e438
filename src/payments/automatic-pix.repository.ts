import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AutomaticPixStatus } from '../domain/automatic-pix';
import { Lease } from '../database/leases';

/** The PSP's notifications waiting in automatic_pix_inbox are handed to one instance at a time for a minute (a process that dies lets them go). */
const NOTIFIED_LEASE = new Lease({ table: 'automatic_pix_inbox', column: 'claimed_at', duration: '1 minute' });

/** What a Pix Automático notification named: a recurrence (`rec`, its idRec) or a recurring charge (`cobr`, its txid). */
export type NotifiedKind = 'rec' | 'cobr';
export interface NotifiedItem {
  id: number;
  kind: NotifiedKind;
  resourceId: string;
  /** How many notifications named it while it waited: the row is dropped only if none came during its check. */
  notifications: number;
}

/** A renewal collected by Pix Automático, as the jobs read it. */
export interface AutomaticCharge {
  saleId: number;
  sellerId: number;
  subscriptionId: number;
  dueDate: string;
  sentAt: Date | null;
  retries: number;
  status: string;
  recurrenceId: string | null;
  authorization: AutomaticPixStatus | null;
}

const CHARGE_COLUMNS = `s.id AS "saleId", s.seller_id AS "sellerId", s.subscription_id AS "subscriptionId", s.automatic_pix_due_date AS "dueDate",
  s.automatic_pix_sent_at AS "sentAt", s.automatic_pix_retries AS "retries", s.status, sub.automatic_pix_recurrence_id AS "recurrenceId",
  sub.automatic_pix_status AS "authorization"`;

/**
 * The reads of Pix Automático (recurring charges on sales, authorizations on subscriptions) and its inbox of
 * notifications (automatic_pix_inbox). Its writes on sales and subscriptions are their repositories'.
 */
@Injectable()
export class AutomaticPixRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The seller's sales whose recurring charge is at the PSP and still open. */
  async openChargeIds(sellerId: number): Promise<number[]> {
    const rows: Array<{ id: number }> = await this.dataSource.query(
      `SELECT id FROM sales WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NOT NULL AND seller_id = $1 ORDER BY id`,
      [sellerId],
    );
    return rows.map((row) => row.id);
  }

  async charges(saleIds: number[]): Promise<AutomaticCharge[]> {
    if (saleIds.length === 0) return [];
    return this.dataSource.query(`SELECT ${CHARGE_COLUMNS} FROM sales s JOIN subscriptions sub ON sub.id = s.subscription_id WHERE s.id = ANY($1::int[]) ORDER BY s.id`, [saleIds]);
  }

  /** Sent recurring charges whose sale was cancelled here (the subscription stopped): still to cancel at the PSP. */
  async chargesToCancel(sellerId: number | null, limit: number): Promise<AutomaticCharge[]> {
    return this.dataSource.query(
      `SELECT ${CHARGE_COLUMNS} FROM sales s JOIN subscriptions sub ON sub.id = s.subscription_id
        WHERE s.automatic_pix_sent_at IS NOT NULL AND s.status = 'CANCELADO' AND s.pix_charge_closed_at IS NULL AND ($1::int IS NULL OR s.seller_id = $1)
        ORDER BY s.id LIMIT $2`,
      [sellerId, limit],
    );
  }

  /** The opening sale of a subscription (period 0). */
  async openingSale(subscriptionId: number, manager: EntityManager): Promise<number | null> {
    const [row]: Array<{ id: number }> = await manager.query(`SELECT id FROM sales WHERE subscription_id = $1 AND billing_period = 0 ORDER BY id LIMIT 1`, [subscriptionId]);
    return row?.id ?? null;
  }

  /**
   * A notification's ids, kept before it is answered: each once while it waits. One already waiting is
   * counted again and made due now: it may be under a check that read the PSP before this change. All or
   * nothing: false, and nothing kept, when the ids not already waiting would take this kind's inbox past
   * `max` (counted under a lock per kind, so that two notifications at once cannot both fit).
   */
  async enqueueNotified(kind: NotifiedKind, resourceIds: string[], max: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('automatic-pix-inbox'), hashtext($1))`, [kind]);
      const [{ fits }]: Array<{ fits: boolean }> = await manager.query(
        `WITH ids AS (SELECT DISTINCT unnest($2::varchar[]) AS id),
              fresh AS (SELECT id FROM ids WHERE NOT EXISTS (SELECT 1 FROM automatic_pix_inbox WHERE kind = $1 AND resource_id = ids.id))
         SELECT (SELECT count(*) FROM (SELECT 1 FROM automatic_pix_inbox WHERE kind = $1 LIMIT $3) waiting) + (SELECT count(*) FROM fresh) <= $3 AS fits`,
        [kind, resourceIds, max],
      );
      if (!fits) return false;
      await manager.query(
        `INSERT INTO automatic_pix_inbox (kind, resource_id) SELECT DISTINCT $1::varchar, unnest($2::varchar[])
         ON CONFLICT (kind, resource_id) DO UPDATE SET notifications = automatic_pix_inbox.notifications + 1, next_attempt_at = now()`,
        [kind, resourceIds],
      );
      return true;
    });
  }

  /**
   * Notified ids due to be checked with the PSP, the latest due first (a notification just come is not
   * held behind a backlog), each leased for a minute.
   */
  async claimNotified(limit: number): Promise<NotifiedItem[]> {
    const rows = await NOTIFIED_LEASE.claim<{ id: number; kind: NotifiedKind; resource_id: string; notifications: number }>(
      this.dataSource,
      `SELECT id FROM automatic_pix_inbox WHERE next_attempt_at <= now() AND ${NOTIFIED_LEASE.free()} ORDER BY next_attempt_at DESC LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
      ['id', 'kind', 'resource_id', 'notifications'],
    );
    return rows.map((row) => ({ id: row.id, kind: row.kind, resourceId: row.resource_id, notifications: row.notifications }));
  }

  /** A check done: the row dropped, unless another notification came meanwhile (then it is given back, to be checked again). */
  async doneNotified(item: NotifiedItem): Promise<void> {
    const [, dropped] = (await this.dataSource.query(`DELETE FROM automatic_pix_inbox WHERE id = $1 AND notifications = $2`, [item.id, item.notifications])) as [unknown, number];
    if (dropped === 0) await NOTIFIED_LEASE.release(this.dataSource, [item.id]);
  }

  /** A check that failed: tried again later, later each time (up to 10 minutes apart). */
  async retryNotified(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE automatic_pix_inbox SET attempts = attempts + 1, claimed_at = NULL,
              next_attempt_at = now() + make_interval(secs => least(600, 2 ^ least(attempts, 10))) WHERE id = $1`,
      [id],
    );
  }

  /** The seller's subscriptions whose authorization is among `recurrenceIds` (the webhook's). */
  async subscriptionsOfRecurrences(recurrenceIds: string[]): Promise<number[]> {
    const rows: Array<{ id: number }> = await this.dataSource.query(`SELECT id FROM subscriptions WHERE automatic_pix_recurrence_id = ANY($1::varchar[])`, [recurrenceIds]);
    return rows.map((row) => row.id);
  }
}
