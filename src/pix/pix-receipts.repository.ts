import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Lease } from '../database/leases';
import { Cents, cents } from '../domain/money';

export type ReceiptOutcome = 'APPLIED' | 'UNMATCHED' | 'LATE' | 'AMOUNT_MISMATCH' | 'DUPLICATE';
export type ReturnStatus = 'PENDING' | 'DEVOLVIDO' | 'NAO_REALIZADO';

export interface ReceiptRow {
  id: number;
  endToEndId: string;
  txid: string | null;
  amountCents: Cents;
  paidAt: Date;
  saleId: number | null;
  sellerId: number | null;
  outcome: ReceiptOutcome;
  seenBy: 'NOTIFICATION' | 'RECONCILIATION';
  returnId: string | null;
  returnStatus: ReturnStatus | null;
  returnReason: string | null;
  returnRequestedAt: Date | null;
  createdAt: Date;
}

const COLUMNS = `id::int AS id, end_to_end_id AS "endToEndId", txid, amount_cents AS "amountCents", paid_at AS "paidAt", sale_id AS "saleId",
  seller_id AS "sellerId", outcome, seen_by AS "seenBy", return_id AS "returnId", return_status AS "returnStatus", return_reason AS "returnReason",
  return_requested_at AS "returnRequestedAt", created_at AS "createdAt"`;

const hydrate = (row: Record<string, unknown>): ReceiptRow => ({ ...(row as unknown as ReceiptRow), amountCents: cents(Number(row.amountCents)) });

/** Notifications are handed to one instance at a time for a minute (a process that dies lets them go). */
const INBOX_LEASE = new Lease({ table: 'pix_inbox', column: 'claimed_at', idColumn: 'end_to_end_id', duration: '1 minute' });
/** Reconciliation runs in one instance at a time; the lease outlasts any pass. */
const RECONCILIATION_LEASE = new Lease({ table: 'pix_reconciliation_cursor', column: 'claimed_at', duration: '10 minutes' });

/** The Pix the PSP reported (pix_receipts), its notifications still to check (pix_inbox), and how far reconciliation got. */
@Injectable()
export class PixReceiptsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findForUpdate(endToEndId: string, manager: EntityManager): Promise<ReceiptRow | null> {
    const [row] = await manager.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE end_to_end_id = $1 FOR UPDATE`, [endToEndId]);
    return row ? hydrate(row) : null;
  }

  async findByEndToEndId(endToEndId: string): Promise<ReceiptRow | null> {
    const [row] = await this.dataSource.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE end_to_end_id = $1`, [endToEndId]);
    return row ? hydrate(row) : null;
  }

  /** The receipt of a Pix, written once; a return id (GWRT + its id) when it is to go back to its payer. */
  async insert(receipt: Pick<ReceiptRow, 'endToEndId' | 'txid' | 'amountCents' | 'paidAt' | 'saleId' | 'sellerId' | 'outcome' | 'seenBy'>, manager: EntityManager): Promise<ReceiptRow> {
    const [row] = await manager.query(
      `WITH next AS (SELECT nextval('pix_receipts_id_seq') AS id)
       INSERT INTO pix_receipts (id, end_to_end_id, txid, amount_cents, paid_at, sale_id, seller_id, outcome, seen_by, return_id, return_status)
       SELECT next.id, $1, $2, $3, $4, $5, $6, $7::varchar, $8, CASE WHEN $7 = 'APPLIED' THEN NULL ELSE 'GWRT' || lpad(next.id::text, 20, '0') END,
              CASE WHEN $7 = 'APPLIED' THEN NULL ELSE 'PENDING' END
         FROM next
       RETURNING ${COLUMNS}`,
      [receipt.endToEndId, receipt.txid, receipt.amountCents, receipt.paidAt, receipt.saleId, receipt.sellerId, receipt.outcome, receipt.seenBy],
    );
    return hydrate(row);
  }

  async findByReturnIdForUpdate(returnId: string, manager: EntityManager): Promise<ReceiptRow | null> {
    const [row] = await manager.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE return_id = $1 FOR UPDATE`, [returnId]);
    return row ? hydrate(row) : null;
  }

  async setReturn(id: number, status: ReturnStatus, reason: string | null, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource).query(
      `UPDATE pix_receipts SET return_status = $2, return_reason = $3, return_requested_at = COALESCE(return_requested_at, now()), updated_at = now() WHERE id = $1`,
      [id, status, reason],
    );
  }

  /** Returns not settled yet, oldest first. */
  async pendingReturns(limit: number): Promise<ReceiptRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE return_status = 'PENDING' ORDER BY updated_at LIMIT $1`, [limit]);
    return rows.map(hydrate);
  }

  /** Which of these end-to-end ids have a receipt. */
  async known(endToEndIds: string[]): Promise<Set<string>> {
    if (endToEndIds.length === 0) return new Set();
    const rows: Array<{ end_to_end_id: string }> = await this.dataSource.query(`SELECT end_to_end_id FROM pix_receipts WHERE end_to_end_id = ANY($1::varchar[])`, [endToEndIds]);
    return new Set(rows.map((row) => row.end_to_end_id));
  }

  /**
   * Of these Pix, those whose notification came less than a minute ago and is not checked yet (the inbox
   * worker is about to apply them). One waiting longer (behind a flood of forged ids, or claimed by an
   * instance that hangs) is not excluded: reconciliation applies it.
   */
  async notifiedUnchecked(endToEndIds: string[]): Promise<Set<string>> {
    if (endToEndIds.length === 0) return new Set();
    const rows: Array<{ end_to_end_id: string }> = await this.dataSource.query(
      `SELECT end_to_end_id FROM pix_inbox WHERE end_to_end_id = ANY($1::varchar[]) AND attempts = 0 AND received_at > now() - interval '1 minute'`,
      [endToEndIds],
    );
    return new Set(rows.map((row) => row.end_to_end_id));
  }

  async inPeriod(from: Date, to: Date): Promise<ReceiptRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE paid_at >= $1 AND paid_at < $2 ORDER BY paid_at, id`, [from, to]);
    return rows.map(hydrate);
  }

  /**
   * The sales the gateway holds as paid through the PSP (PAGO, or paid then reversed or disputed) whose
   * payment it booked in [from, to), whatever their columns say: each must have its Pix at the PSP. A Pix
   * Automático charge sent to the PSP counts when `withRecurring` (its PSP is the configured one).
   */
  async salesHeldAsPaid(from: Date, to: Date, withRecurring: boolean): Promise<Array<{ saleId: number; endToEndId: string | null; amountCents: Cents }>> {
    const rows: Array<{ id: number; pix_end_to_end_id: string | null; amount_cents: string }> = await this.dataSource.query(
      `SELECT id, pix_end_to_end_id, amount_cents FROM sales
        WHERE (pix_provider = 'api-pix' OR ($3 AND pix_provider IS NULL AND payment_method = 'PIX' AND automatic_pix_sent_at IS NOT NULL))
          AND status IN ('PAGO', 'ESTORNADO', 'MED', 'CHARGEBACK') AND completed_at >= $1 AND completed_at < $2
        ORDER BY id`,
      [from, to, withRecurring],
    );
    return rows.map((row) => ({ saleId: row.id, endToEndId: row.pix_end_to_end_id, amountCents: cents(Number(row.amount_cents)) }));
  }

  /**
   * Notifications to check: each Pix once while it waits (a repeated notification finds it there). All or
   * nothing: false, and nothing written, when the ids not already waiting would take the inbox past `max`
   * (counted under a lock, so that two notifications at once cannot both fit).
   */
  async enqueue(endToEndIds: string[], max: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('pix-inbox'))`);
      const [{ fits }]: Array<{ fits: boolean }> = await manager.query(
        `WITH ids AS (SELECT DISTINCT unnest($1::varchar[]) AS id),
              fresh AS (SELECT id FROM ids WHERE NOT EXISTS (SELECT 1 FROM pix_inbox WHERE end_to_end_id = ids.id))
         SELECT (SELECT count(*) FROM (SELECT 1 FROM pix_inbox LIMIT $2) waiting) + (SELECT count(*) FROM fresh) <= $2 AS fits`,
        [endToEndIds, max],
      );
      if (fits) await manager.query(`INSERT INTO pix_inbox (end_to_end_id) SELECT DISTINCT unnest($1::varchar[]) ON CONFLICT (end_to_end_id) DO NOTHING`, [endToEndIds]);
      return fits;
    });
  }

  /**
   * Notifications due, the latest first: a Pix notified now is checked before a backlog of older ones (a
   * flood of forged ids does not hold it back; reconciliation applies what waits over a minute).
   */
  async claimInbox(limit: number): Promise<string[]> {
    const rows = await INBOX_LEASE.claim<{ end_to_end_id: string }>(
      this.dataSource,
      `SELECT end_to_end_id FROM pix_inbox WHERE next_attempt_at <= now() AND ${INBOX_LEASE.free()} ORDER BY next_attempt_at DESC LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
      ['end_to_end_id'],
    );
    return rows.map((row) => row.end_to_end_id);
  }

  async doneInbox(endToEndId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM pix_inbox WHERE end_to_end_id = $1`, [endToEndId]);
  }

  /** A check that failed: tried again later, later each time (up to 10 minutes apart). */
  async retryInbox(endToEndId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE pix_inbox SET attempts = attempts + 1, claimed_at = NULL,
              next_attempt_at = now() + make_interval(secs => least(600, 2 ^ least(attempts, 10))) WHERE end_to_end_id = $1`,
      [endToEndId],
    );
  }

  /** Takes the reconciliation lease; the instant compared up to so far, or null when another instance holds it. */
  async claimReconciliation(start: Date): Promise<Date | null> {
    await this.dataSource.query(`INSERT INTO pix_reconciliation_cursor (id, checked_until) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [start]);
    const [row] = await RECONCILIATION_LEASE.claim<{ checked_until: Date }>(
      this.dataSource,
      `SELECT id FROM pix_reconciliation_cursor WHERE id = 1 AND ${RECONCILIATION_LEASE.free()} FOR UPDATE SKIP LOCKED`,
      [],
      ['checked_until'],
    );
    return row ? row.checked_until : null;
  }

  async releaseReconciliation(checkedUntil: Date | null): Promise<void> {
    await this.dataSource.query(`UPDATE pix_reconciliation_cursor SET claimed_at = NULL, checked_until = COALESCE($1, checked_until) WHERE id = 1`, [checkedUntil]);
  }

  /** Cancelled sales whose charge is still open at the PSP. */
  async chargesToClose(limit: number): Promise<Array<{ id: number; txid: string }>> {
    const rows: Array<{ id: number; external_transaction_id: string }> = await this.dataSource.query(
      `SELECT id, external_transaction_id FROM sales WHERE status = 'CANCELADO' AND pix_provider = 'api-pix' AND pix_charge_closed_at IS NULL ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ id: row.id, txid: row.external_transaction_id }));
  }
}
