import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AutomaticPixStatus } from '../domain/automatic-pix';
import { Lease } from '../database/leases';

/** How often an open recurring charge, or an authorization still waiting for the payer, is asked about (the webhook is the fast path). */
const CHARGE_POLL = new Lease({ table: 'sales', column: 'automatic_pix_checked_at', duration: '1 minute' });
const AUTHORIZATION_POLL = new Lease({ table: 'subscriptions', column: 'automatic_pix_checked_at', duration: '1 minute' });
/**
 * A renewal's recurring charge is sent by one instance: the charges due are claimed on the same column,
 * before they are sent (the poll above leases only sent ones), for ten minutes, ten at a time (each send is
 * at most three tries of API_PIX_TIMEOUT_MS), so the lease outlasts the work; markSent gives it back.
 */
const CHARGE_SEND = new Lease({ table: 'sales', column: 'automatic_pix_checked_at', duration: '10 minutes' });
/** An authorized recurrence is asked about hourly: the net under the webhook for a payer who revokes it in their bank. */
const AUTHORIZED_POLL = new Lease({ table: 'subscriptions', column: 'automatic_pix_checked_at', duration: '1 hour' });


/** A renewal collected by Pix Automático, as the jobs read it. */
export interface AutomaticCharge {
  saleId: number;
  /** The provider that holds the sale (and its subscription's recurrence). */
  provider: string;
  sellerId: number;
  subscriptionId: number;
  dueDate: string;
  sentAt: Date | null;
  retries: number;
  status: string;
  recurrenceId: string | null;
  authorization: AutomaticPixStatus | null;
}

const CHARGE_COLUMNS = `s.id AS "saleId", s.provider, s.seller_id AS "sellerId", s.subscription_id AS "subscriptionId", s.automatic_pix_due_date AS "dueDate",
  s.automatic_pix_sent_at AS "sentAt", s.automatic_pix_retries AS "retries", s.status, sub.automatic_pix_recurrence_id AS "recurrenceId",
  sub.automatic_pix_status AS "authorization"`;

/** The SQL of Pix Automático: authorizations on subscriptions, recurring charges on sales. */
@Injectable()
export class AutomaticPixRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Renewals (and journey-2 first charges) whose recurring charge is due to be sent by `sendBy`
   * (YYYY-MM-DD), not sent yet, each leased (CHARGE_SEND) so that no other instance sends it meanwhile.
   * Not the charge of a period a cancellation scheduled at or before its due date never gives (a
   * journey-2 trial cancelled at its end: nextBillingDate, and so the period's end, is trialEndsAt).
   */
  async claimChargesToSend(sendBy: string, sellerId: number | null, limit: number): Promise<AutomaticCharge[]> {
    const claimed = await CHARGE_SEND.claim(
      this.dataSource,
      `SELECT id FROM sales
        WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NULL
          AND automatic_pix_due_date <= $1 AND ($2::int IS NULL OR seller_id = $2) AND ${CHARGE_SEND.free()}
          AND EXISTS (SELECT 1 FROM subscriptions sub WHERE sub.id = sales.subscription_id AND sub.automatic_pix_status IS DISTINCT FROM 'PENDING'
                        AND NOT (sub.scheduled_cancellation_date IS NOT NULL AND sales.billing_period = sub.current_period
                                 AND sub.scheduled_cancellation_date <= sub.period_due_at))
        ORDER BY automatic_pix_due_date LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [sendBy, sellerId, limit],
    );
    return this.charges(claimed.map((row) => row.id));
  }

  /** Gives back the send lease of charges whose sending failed, so that the next pass tries them at once. */
  async releaseChargesToSend(saleIds: number[]): Promise<void> {
    await CHARGE_SEND.release(this.dataSource, saleIds);
  }

  /** Sent charges still open (PENDENTE), each leased for a minute so that instances never ask about one together. */
  async claimOpenCharges(sellerId: number | null, limit: number): Promise<AutomaticCharge[]> {
    const claimed = await CHARGE_POLL.claim(
      this.dataSource,
      `SELECT id FROM sales WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NOT NULL
          AND ($1::int IS NULL OR seller_id = $1) AND ${CHARGE_POLL.free()}
        ORDER BY automatic_pix_due_date LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit],
    );
    return this.charges(claimed.map((row) => row.id));
  }

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

  /** The charge is at the PSP: its send lease given back, so that the open-charge poll may ask about it at once. */
  async markSent(saleId: number, at: Date): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET automatic_pix_sent_at = $2, automatic_pix_checked_at = NULL WHERE id = $1 AND automatic_pix_sent_at IS NULL`, [saleId, at]);
  }

  async markRetryAsked(saleId: number, retries: number): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET automatic_pix_retries = $2 WHERE id = $1`, [saleId, retries]);
  }

  async markChargeClosed(saleId: number, at: Date): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET pix_charge_closed_at = $2 WHERE id = $1`, [saleId, at]);
  }

  /** The sale stops being collected by the PSP (its authorization ended before it was sent): a plain PIX sale from now on. */
  async becomePlainPix(saleId: number, pix: { pixCode: string; pixReceiverKey: string; externalTransactionId: string; expiresAt: Date | null }, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE sales SET automatic_pix_due_date = NULL, pix_code = $2, pix_receiver_key = $3, external_transaction_id = $4, expires_at = $5
        WHERE id = $1 AND status = 'PENDENTE' AND automatic_pix_sent_at IS NULL`,
      [saleId, pix.pixCode, pix.pixReceiverKey, pix.externalTransactionId, pix.expiresAt],
    );
  }

  /** The journey-2 first charge's due date once the trial it waits for started. */
  async scheduleFirstCharge(saleId: number, dueDate: string, expiresAt: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE sales SET automatic_pix_due_date = $2, expires_at = $3 WHERE id = $1 AND status = 'PENDENTE'`, [saleId, dueDate, expiresAt]);
  }

  /**
   * Subscriptions whose authorization is to be asked about, each leased: those waiting for the payer and
   * those stopped here whose authorization is still live at the PSP (a minute), and the authorized ones
   * (an hour).
   */
  async claimAuthorizationsToCheck(sellerId: number | null, limit: number): Promise<number[]> {
    const pending = await AUTHORIZATION_POLL.claim(
      this.dataSource,
      `SELECT id FROM subscriptions
        WHERE (automatic_pix_status = 'PENDING' OR (automatic_pix_status = 'AUTHORIZED' AND status IN ('CANCELLED', 'EXPIRED')))
          AND automatic_pix_recurrence_id IS NOT NULL AND ($1::int IS NULL OR seller_id = $1) AND ${AUTHORIZATION_POLL.free()}
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit],
    );
    const authorized = await AUTHORIZED_POLL.claim(
      this.dataSource,
      `SELECT id FROM subscriptions
        WHERE automatic_pix_status = 'AUTHORIZED' AND automatic_pix_recurrence_id IS NOT NULL AND ($1::int IS NULL OR seller_id = $1) AND ${AUTHORIZED_POLL.free()}
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit],
    );
    return [...new Set([...pending, ...authorized].map((row) => row.id))];
  }

  /** The authorization's new state, in the caller's transaction; the subscription's updated_at is `at` (the change's now, as its postback says). */
  async saveAuthorization(
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

  /** The opening sale of a subscription (period 0). */
  async openingSale(subscriptionId: number, manager: EntityManager): Promise<number | null> {
    const [row]: Array<{ id: number }> = await manager.query(`SELECT id FROM sales WHERE subscription_id = $1 AND billing_period = 0 ORDER BY id LIMIT 1`, [subscriptionId]);
    return row?.id ?? null;
  }

  /** The seller's subscriptions whose authorization is among `recurrenceIds` (the webhook's). */
  async subscriptionsOfRecurrences(recurrenceIds: string[]): Promise<number[]> {
    const rows: Array<{ id: number }> = await this.dataSource.query(`SELECT id FROM subscriptions WHERE automatic_pix_recurrence_id = ANY($1::varchar[])`, [recurrenceIds]);
    return rows.map((row) => row.id);
  }
}
