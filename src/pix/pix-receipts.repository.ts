import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Lease } from '../database/leases';
import { Cents, cents } from '../domain/money';

export type ReceiptOutcome = 'APPLIED' | 'UNMATCHED' | 'LATE' | 'AMOUNT_MISMATCH' | 'DUPLICATE';
export type ReturnStatus = 'PENDING' | 'DEVOLVIDO' | 'NAO_REALIZADO';

export interface ReceiptRow {
  id: number;
  /** The PSP that reported the Pix. */
  provider: string;
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

const COLUMNS = `id::int AS id, provider, end_to_end_id AS "endToEndId", txid, amount_cents AS "amountCents", paid_at AS "paidAt", sale_id AS "saleId",
  seller_id AS "sellerId", outcome, seen_by AS "seenBy", return_id AS "returnId", return_status AS "returnStatus", return_reason AS "returnReason",
  return_requested_at AS "returnRequestedAt", created_at AS "createdAt"`;

const hydrate = (row: Record<string, unknown>): ReceiptRow => ({ ...(row as unknown as ReceiptRow), amountCents: cents(Number(row.amountCents)) });

/** Notifications are handed to one instance at a time for a minute (a process that dies lets them go). */
/** Reconciliation runs in one instance at a time; the lease outlasts any pass. */
/**
 * One reconciliation pass at a time. Its holder renews the lease while it works (holdReconciliation, every
 * 20 s), so a pass cut short by a killed process stops holding it within a minute, not after the longest
 * pass: a Pix whose notification was lost waits about one interval more, not ten minutes (found by the chaos run).
 */
const RECONCILIATION_LEASE = new Lease({ table: 'pix_reconciliation_cursor', column: 'claimed_at', duration: '1 minute' });

/** The Pix the PSP reported (pix_receipts) and how far reconciliation got. */
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
  async insert(receipt: Pick<ReceiptRow, 'provider' | 'endToEndId' | 'txid' | 'amountCents' | 'paidAt' | 'saleId' | 'sellerId' | 'outcome' | 'seenBy'>, manager: EntityManager): Promise<ReceiptRow> {
    const [row] = await manager.query(
      `WITH next AS (SELECT nextval('pix_receipts_id_seq') AS id)
       INSERT INTO pix_receipts (id, end_to_end_id, txid, amount_cents, paid_at, sale_id, seller_id, outcome, seen_by, provider, return_id, return_status)
       SELECT next.id, $1, $2, $3, $4, $5, $6, $7::varchar, $8, $9, CASE WHEN $7 = 'APPLIED' THEN NULL ELSE 'GWRT' || lpad(next.id::text, 20, '0') END,
              CASE WHEN $7 = 'APPLIED' THEN NULL ELSE 'PENDING' END
         FROM next
       RETURNING ${COLUMNS}`,
      [receipt.endToEndId, receipt.txid, receipt.amountCents, receipt.paidAt, receipt.saleId, receipt.sellerId, receipt.outcome, receipt.seenBy, receipt.provider],
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
  async pendingReturns(limit: number, providers: readonly string[]): Promise<ReceiptRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM pix_receipts WHERE return_status = 'PENDING' AND provider = ANY($2::varchar[]) ORDER BY updated_at LIMIT $1`,
      [limit, providers],
    );
    return rows.map(hydrate);
  }

  /** Which of these end-to-end ids have a receipt. */
  async known(endToEndIds: string[]): Promise<Set<string>> {
    if (endToEndIds.length === 0) return new Set();
    const rows: Array<{ end_to_end_id: string }> = await this.dataSource.query(`SELECT end_to_end_id FROM pix_receipts WHERE end_to_end_id = ANY($1::varchar[])`, [endToEndIds]);
    return new Set(rows.map((row) => row.end_to_end_id));
  }

  async inPeriod(from: Date, to: Date): Promise<ReceiptRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(`SELECT ${COLUMNS} FROM pix_receipts WHERE paid_at >= $1 AND paid_at < $2 ORDER BY paid_at, id`, [from, to]);
    return rows.map(hydrate);
  }

  /**
   * The PIX sales the gateway holds as paid through `provider` (PAGO, or paid then reversed or disputed)
   * whose payment it booked in [from, to), whatever their columns say: each must have its Pix at that
   * PSP. A Pix Automático charge counts like any other PIX sale of that provider.
   */
  async salesHeldAsPaid(provider: string, from: Date, to: Date): Promise<Array<{ saleId: number; endToEndId: string | null; amountCents: Cents }>> {
    const rows: Array<{ id: number; pix_end_to_end_id: string | null; amount_cents: string }> = await this.dataSource.query(
      `SELECT id, pix_end_to_end_id, amount_cents FROM sales
        WHERE provider = $3 AND payment_method = 'PIX'
          AND status IN ('PAGO', 'ESTORNADO', 'MED', 'CHARGEBACK') AND completed_at >= $1 AND completed_at < $2
        ORDER BY id`,
      [from, to, provider],
    );
    return rows.map((row) => ({ saleId: row.id, endToEndId: row.pix_end_to_end_id, amountCents: cents(Number(row.amount_cents)) }));
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

  /** Renews the lease of the pass under way (its holder calls it while it works). */
  async holdReconciliation(): Promise<void> {
    await RECONCILIATION_LEASE.hold(this.dataSource, [1]);
  }

  async releaseReconciliation(checkedUntil: Date | null): Promise<void> {
    await this.dataSource.query(`UPDATE pix_reconciliation_cursor SET claimed_at = NULL, checked_until = COALESCE($1, checked_until) WHERE id = 1`, [checkedUntil]);
  }

  /** Cancelled sales whose charge is still open at the PSP. */
  async chargesToClose(provider: string, limit: number): Promise<Array<{ id: number; txid: string }>> {
    // An immediate charge's (a Pix Automático charge, with its due date, is the PSP's recurring charge: closed by AutomaticPixService).
    const rows: Array<{ id: number; external_transaction_id: string }> = await this.dataSource.query(
      `SELECT id, external_transaction_id FROM sales
        WHERE status = 'CANCELADO' AND payment_method = 'PIX' AND provider = $2 AND pix_charge_closed_at IS NULL
          AND automatic_pix_due_date IS NULL AND external_transaction_id IS NOT NULL
        ORDER BY updated_at LIMIT $1`,
      [limit, provider],
    );
    return rows.map((row) => ({ id: row.id, txid: row.external_transaction_id }));
  }
}
