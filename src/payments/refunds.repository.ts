import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Cents, cents } from '../domain/money';

export type RefundStatus = 'PENDING' | 'COMPLETED' | 'FAILED';
/** Who asked for it: the seller (POST /api/sales/{id}/refunds), or the PSP on its own (a MED's return). */
export type RefundInitiator = 'SELLER' | 'PSP';

export interface RefundRow {
  id: number;
  saleId: number;
  sellerId: number;
  amountCents: Cents;
  sellerDebitCents: Cents;
  platformCostCents: Cents;
  status: RefundStatus;
  provider: string;
  providerRefundId: string;
  returnId: string | null;
  failureReason: string | null;
  initiatedBy: RefundInitiator;
  /** A PSP's return: its id at the PSP and its natureza (MED_OPERACIONAL, MED_FRAUDE, …); null for a seller's refund. */
  pspReturnId: string | null;
  nature: string | null;
  requestedAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `id::int AS id, sale_id AS "saleId", seller_id AS "sellerId", amount_cents AS "amountCents", seller_debit_cents AS "sellerDebitCents",
  platform_cost_cents AS "platformCostCents", status, provider, provider_refund_id AS "providerRefundId", return_id AS "returnId",
  failure_reason AS "failureReason", initiated_by AS "initiatedBy", psp_return_id AS "pspReturnId", nature, requested_at AS "requestedAt", completed_at AS "completedAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

function hydrate(row: Record<string, unknown>): RefundRow {
  return {
    ...(row as unknown as RefundRow),
    amountCents: cents(Number(row.amountCents)),
    sellerDebitCents: cents(Number(row.sellerDebitCents)),
    platformCostCents: cents(Number(row.platformCostCents)),
  };
}

/** The refunds of sales (sale_refunds): each full or partial refund, its split and its state at the provider. */
@Injectable()
export class RefundsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(
    refund: Omit<RefundRow, 'id' | 'status' | 'providerRefundId' | 'returnId' | 'failureReason' | 'initiatedBy' | 'pspReturnId' | 'nature' | 'requestedAt' | 'completedAt' | 'createdAt' | 'updatedAt'>,
    manager: EntityManager,
  ): Promise<RefundRow> {
    // The provider's id for it (DevolucaoId: letters and digits) comes from its own id, known once inserted.
    const [row] = await manager.query(
      `WITH next AS (SELECT nextval('sale_refunds_id_seq') AS id)
       INSERT INTO sale_refunds (id, sale_id, seller_id, amount_cents, seller_debit_cents, platform_cost_cents, status, provider, provider_refund_id)
       SELECT next.id, $1, $2, $3, $4, $5, 'PENDING', $6, 'GWRF' || lpad(next.id::text, 20, '0') FROM next
       RETURNING ${COLUMNS}`,
      [refund.saleId, refund.sellerId, refund.amountCents, refund.sellerDebitCents, refund.platformCostCents, refund.provider],
    );
    return hydrate(row);
  }

  /**
   * A return the PSP made on its own, written COMPLETED once per Pix and PSP id (null when it was written
   * already): its own id GWPR + its row id, the PSP's in psp_return_id.
   */
  async insertPspReturn(
    refund: Pick<RefundRow, 'saleId' | 'sellerId' | 'amountCents' | 'sellerDebitCents' | 'platformCostCents' | 'provider' | 'returnId' | 'pspReturnId' | 'nature'>,
    manager: EntityManager,
  ): Promise<RefundRow | null> {
    const [row] = await manager.query(
      `WITH next AS (SELECT nextval('sale_refunds_id_seq') AS id)
       INSERT INTO sale_refunds (id, sale_id, seller_id, amount_cents, seller_debit_cents, platform_cost_cents, status, provider, provider_refund_id,
                                 return_id, initiated_by, psp_return_id, nature, requested_at, completed_at)
       SELECT next.id, $1, $2, $3, $4, $5, 'COMPLETED', $6, 'GWPR' || lpad(next.id::text, 20, '0'), $7, 'PSP', $8, $9, now(), now() FROM next
       ON CONFLICT (sale_id, psp_return_id) WHERE psp_return_id IS NOT NULL DO NOTHING
       RETURNING ${COLUMNS}`,
      [refund.saleId, refund.sellerId, refund.amountCents, refund.sellerDebitCents, refund.platformCostCents, refund.provider, refund.returnId, refund.pspReturnId, refund.nature],
    );
    return row ? hydrate(row) : null;
  }

  async hasPspReturn(saleId: number, pspReturnId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM sale_refunds WHERE sale_id = $1 AND psp_return_id = $2`, [saleId, pspReturnId]);
    return rows.length > 0;
  }

  /** The returns PSPs made on their own, written in [from, to), with the Pix each returned part of. */
  async pspReturnsBetween(from: Date, to: Date): Promise<Array<RefundRow & { endToEndId: string | null }>> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${COLUMNS}, sale_end_to_end_id AS "endToEndId"
         FROM (SELECT r.*, s.pix_end_to_end_id AS sale_end_to_end_id FROM sale_refunds r JOIN sales s ON s.id = r.sale_id
                WHERE r.initiated_by = 'PSP' AND s.payment_method = 'PIX' AND r.created_at >= $1 AND r.created_at < $2) AS returned
        ORDER BY id`,
      [from, to],
    );
    return rows.map((row) => ({ ...hydrate(row), endToEndId: (row.endToEndId as string | null) ?? null }));
  }

  async listOfSale(saleId: number, manager?: EntityManager): Promise<RefundRow[]> {
    const rows: Array<Record<string, unknown>> = await (manager ?? this.dataSource).query(`SELECT ${COLUMNS} FROM sale_refunds WHERE sale_id = $1 ORDER BY id`, [saleId]);
    return rows.map(hydrate);
  }

  async findById(id: number): Promise<RefundRow | null> {
    const [row] = await this.dataSource.query(`SELECT ${COLUMNS} FROM sale_refunds WHERE id = $1`, [id]);
    return row ? hydrate(row) : null;
  }

  async findForUpdate(id: number, manager: EntityManager): Promise<RefundRow | null> {
    const [row] = await manager.query(`SELECT ${COLUMNS} FROM sale_refunds WHERE id = $1 FOR UPDATE`, [id]);
    return row ? hydrate(row) : null;
  }

  async findByProviderId(providerRefundId: string): Promise<RefundRow | null> {
    const [row] = await this.dataSource.query(`SELECT ${COLUMNS} FROM sale_refunds WHERE provider_refund_id = $1`, [providerRefundId]);
    return row ? hydrate(row) : null;
  }

  /** Refunds still PENDING whose last change is older than `ageSeconds`: to send again, or to ask the provider about. */
  async pending(ageSeconds: number, limit: number, providers: readonly string[]): Promise<RefundRow[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM sale_refunds WHERE status = 'PENDING' AND updated_at <= now() - make_interval(secs => $1) AND provider = ANY($3::varchar[]) ORDER BY updated_at LIMIT $2`,
      [ageSeconds, limit, providers],
    );
    return rows.map(hydrate);
  }

  async markRequested(id: number, returnId: string | null): Promise<void> {
    await this.dataSource.query(`UPDATE sale_refunds SET requested_at = COALESCE(requested_at, now()), return_id = COALESCE($2, return_id), updated_at = now() WHERE id = $1 AND status = 'PENDING'`, [id, returnId]);
  }

  /** A card refund left pending (the acquirer took it, or it waits its turn): asked again once it has been left alone a while. */
  async markWaiting(id: number): Promise<void> {
    await this.dataSource.query(`UPDATE sale_refunds SET updated_at = now() WHERE id = $1 AND status = 'PENDING'`, [id]);
  }

  /**
   * A refund about to be sent to its provider (again): when, so that a provider without idempotency is not
   * sent it again while an answer may come; only if it is still PENDING and was not sent since `sentBefore`
   * was read (false: another pass is sending it). Kept to the millisecond, so that it compares with what was read.
   */
  async markSent(id: number, sentBefore: Date | null): Promise<boolean> {
    const [, updated] = (await this.dataSource.query(
      `UPDATE sale_refunds SET requested_at = date_trunc('milliseconds', clock_timestamp()), updated_at = now()
        WHERE id = $1 AND status = 'PENDING' AND requested_at IS NOT DISTINCT FROM $2::timestamptz`,
      [id, sentBefore],
    )) as [unknown, number];
    return updated === 1;
  }

  /** Of the other refunds of a refund's sale: whether an older one is still PENDING, and when one sent to the provider was last sent or finished (one refused before it was sent does not count). */
  async siblingsOf(saleId: number, refundId: number): Promise<{ earlierPending: boolean; lastRefundAt: Date | null }> {
    const [row] = await this.dataSource.query(
      `SELECT COALESCE(bool_or(status = 'PENDING' AND id < $2), false) AS "earlierPending", max(GREATEST(requested_at, completed_at)) FILTER (WHERE requested_at IS NOT NULL) AS "lastRefundAt"
         FROM sale_refunds WHERE sale_id = $1 AND id <> $2`,
      [saleId, refundId],
    );
    return { earlierPending: row?.earlierPending === true, lastRefundAt: row?.lastRefundAt ? new Date(row.lastRefundAt) : null };
  }

  /** Whether a refund of the sale is still PENDING (read in the caller's transaction, under the sale's lock). */
  async hasPending(saleId: number, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM sale_refunds WHERE sale_id = $1 AND status = 'PENDING' LIMIT 1`, [saleId]);
    return rows.length > 0;
  }

  async finish(id: number, status: 'COMPLETED' | 'FAILED', returnId: string | null, reason: string | null, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE sale_refunds SET status = $2, return_id = COALESCE($3, return_id), failure_reason = $4, completed_at = now(), updated_at = now() WHERE id = $1`,
      [id, status, returnId, reason],
    );
  }

  /** What the refunds of a sale not failed took from the seller (their seller_debit_cents). */
  async debitedCents(saleId: number, manager: EntityManager): Promise<number> {
    const [row] = await manager.query(`SELECT COALESCE(sum(seller_debit_cents), 0) AS sum FROM sale_refunds WHERE sale_id = $1 AND status <> 'FAILED'`, [saleId]);
    return Number(row.sum);
  }
}
