import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Cents, cents } from '../domain/money';
import { SalePaymentMethod, SaleStatus } from '../domain/sale-status';
import { SaleItemEntity } from './entities/sale-item.entity';
import { SaleEntity } from './entities/sale.entity';
import { addRowUpdates, insertRows } from '../database/bulk-rows';
import { CteStatement } from '../database/cte-statement';
import { Lease } from '../database/leases';
import { containsPattern, countMatching, createdWithin, newestFirstPage, RowFilter } from '../database/list-queries';
import { PlainRows, poolQuery } from '../database/plain-rows';

export interface SaleFilters {
  status?: SaleStatus;
  paymentMethod?: SalePaymentMethod;
  search?: string;
  createdFrom?: Date;
  createdBefore?: Date;
}


/**
 * Who recorded a sale's move made on someone's word (its status line's recorded_by and reason): the
 * operator, for a dispute reported out of band (POST /admin/sales/{id}/events), and why. The gateway's
 * own moves (a provider's evidence, a job, the seller's API calls, the sandbox) have none.
 */
export interface StatusChangeAuthor {
  recordedBy: 'OPERATOR';
  reason: string;
}

/** A line of a sale's status history; recordedBy and reason null for the gateway's own moves. */
export interface SaleStatusChange {
  previousStatus: SaleStatus | null;
  status: SaleStatus;
  changedAt: Date;
  recordedBy: StatusChangeAuthor['recordedBy'] | null;
  reason: string | null;
}

/** What a lookup answers of a sale (GET /api/transactions/{id}), with its owner. */
export type SaleLookup = Pick<
  SaleEntity,
  | 'id'
  | 'sellerId'
  | 'status'
  | 'paymentMethod'
  | 'amountCents'
  | 'netAmountCents'
  | 'systemFeeCents'
  | 'reserveAmountCents'
  | 'installments'
  | 'customerName'
  | 'customerEmail'
  | 'customerDocumentNumber'
  | 'customerPhone'
  | 'pixCode'
  | 'cardLastFour'
  | 'cardBrand'
  | 'acquirerReturnCode'
  | 'acquirerReturnMessage'
  | 'boletoCode'
  | 'externalTransactionId'
  | 'shipping'
  | 'createdAt'
  | 'completedAt'
>;
export type SaleLookupItem = Pick<SaleItemEntity, 'id' | 'position' | 'title' | 'unitPriceCents' | 'quantity' | 'tangible'>;

/** An item as itemsJson writes it. */
type JsonItem = Omit<SaleLookupItem, 'unitPriceCents'> & { unitPriceCents: number };

/** The items of `source` (rows of sale_items as `i`) as one JSON array in position order, '[]' when none. */
function itemsJson(source: string): string {
  return `COALESCE((SELECT json_agg(json_build_object('id', i.id, 'position', i.position, 'title', i.title, 'unitPriceCents', i.unit_price_cents,
                                                     'quantity', i.quantity, 'tangible', i.tangible) ORDER BY i.position)
                     FROM ${source}), '[]')`;
}

function lookupItems(items: JsonItem[]): SaleLookupItem[] {
  return items.map((item) => ({ ...item, unitPriceCents: cents(item.unitPriceCents) }));
}

interface SaleLookupRow {
  id: number;
  seller_id: number;
  status: SaleStatus;
  payment_method: SaleEntity['paymentMethod'];
  amount_cents: string;
  net_amount_cents: string | null;
  system_fee_cents: string | null;
  reserve_amount_cents: string | null;
  installments: number | null;
  customer_name: string;
  customer_email: string;
  customer_document_number: string | null;
  customer_phone: string | null;
  pix_code: string | null;
  card_last_four: string | null;
  card_brand: string | null;
  acquirer_return_code: string | null;
  acquirer_return_message: string | null;
  boleto_code: string | null;
  external_transaction_id: string | null;
  shipping: Record<string, string> | null;
  created_at: Date;
  completed_at: Date | null;
  items: JsonItem[];
}

/** An item as the insert's JSON carries it, in its position (the order given). */
function itemRecord(item: Partial<SaleItemEntity>, position: number): Record<string, unknown> {
  return {
    position,
    title: item.title,
    unit_price_cents: item.unitPriceCents,
    quantity: item.quantity,
    tangible: item.tangible,
    product_id: item.productId ?? null,
    plan_id: item.planId ?? null,
    plan_name: item.planName ?? null,
    external_id: item.externalId ?? null,
  };
}

const centsOrNull = (value: string | null): Cents | null => (value === null ? null : cents(Number(value)));

/**
 * The recovery job's lease on a card sale (provider_checked_at, a minute): taken by claimStuckInProcessing,
 * and by holdFromRecovery for a billing batch whose charges are still to make.
 */
const RECOVERY_LEASE = new Lease({ table: 'sales', column: 'provider_checked_at', duration: '1 minute' });

/**
 * The boleto poll's lease on a real issuer's boleto (provider_checked_at, CIELO_BOLETO_POLL_SECONDS as parameter
 * $4): an open boleto, or one cancelled unpaid within the late watch, is asked about once per period; one past
 * the time it is cancelled at is asked about again after a minute, so that its end never waits a whole period.
 */
const BOLETO_POLL = new Lease({ table: 'sales', column: 'provider_checked_at', duration: { secondsParam: 4 } });

/** An issued boleto claimed for a look-up at its issuer. */
export interface ClaimedBoleto {
  id: number;
  provider: string;
  externalId: string;
}

/** How often an open recurring charge of Pix Automático is asked about (the webhook is the fast path). */
const AUTOMATIC_PIX_CHARGE_POLL = new Lease({ table: 'sales', column: 'automatic_pix_checked_at', duration: '1 minute' });
/**
 * A renewal's recurring charge is sent by one instance: the charges due are claimed on the same column,
 * before they are sent (the poll above leases only sent ones), for ten minutes, ten at a time (each send is
 * at most three tries of API_PIX_TIMEOUT_MS), so the lease outlasts the work; markAutomaticPixSent gives it back.
 */
const AUTOMATIC_PIX_CHARGE_SEND = new Lease({ table: 'sales', column: 'automatic_pix_checked_at', duration: '10 minutes' });

@Injectable()
export class SalesRepository {
  /** Sales and their items as entities, read and written in plain SQL. */
  private readonly saleRows: PlainRows<SaleEntity>;
  private readonly itemRows: PlainRows<SaleItemEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.saleRows = new PlainRows(dataSource.getMetadata(SaleEntity));
    this.itemRows = new PlainRows(dataSource.getMetadata(SaleItemEntity));
  }

  /** A new sale id from the sequence, taken before the provider is asked for the sale's PIX code or boleto. */
  async nextId(): Promise<number> {
    const [row] = await poolQuery<{ id: string }>(this.dataSource, `SELECT nextval(pg_get_serial_sequence('sales', 'id')) AS id`, []);
    return Number(row.id);
  }

  /**
   * Writes the sale (under the id taken by nextId, or the sequence's next), its status history (each of
   * `history`, the statuses it went through before its own, oldest first, then its own: a card sale is
   * written EM_PROCESSAMENTO after PENDENTE) and its items, in one statement; the sale as stored
   * (RETURNING *, no re-read) and its items as a lookup shows them (for the postbacks of its first
   * moves, which then need not read them). The items' foreign key is checked at the statement's end.
   */
  async insert(
    sale: Partial<SaleEntity> & { status: SaleStatus },
    items: Array<Partial<SaleItemEntity>>,
    manager: EntityManager,
    history: SaleStatus[] = [],
  ): Promise<{ sale: SaleEntity; items: SaleLookupItem[] }> {
    const [saleInsert, parameters] = this.saleRows.insertStatement([sale]);
    const lines = [...history, sale.status];
    const next = (value: unknown) => `$${parameters.push(value)}`;
    const rows: Array<Record<string, unknown> & { inserted_items: JsonItem[] }> = await manager.query(
      `WITH sale AS (${saleInsert} RETURNING *),
            history AS (
              INSERT INTO sale_status_changes (sale_id, previous_status, status)
              SELECT sale.id, h.previous, h.status FROM sale, unnest(${next([null, ...history])}::varchar[], ${next(lines)}::varchar[]) WITH ORDINALITY AS h(previous, status, n)
               ORDER BY h.n),
            items AS (
              INSERT INTO sale_items (sale_id, position, title, unit_price_cents, quantity, tangible, product_id, plan_id, plan_name, external_id)
              SELECT sale.id, i.position, i.title, i.unit_price_cents, i.quantity, i.tangible, i.product_id, i.plan_id, i.plan_name, i.external_id
                FROM sale, jsonb_to_recordset(${next(JSON.stringify(items.map(itemRecord)))}::jsonb)
                     AS i(position smallint, title varchar, unit_price_cents bigint, quantity integer, tangible boolean, product_id integer,
                          plan_id varchar, plan_name varchar, external_id varchar)
               ORDER BY i.position
              RETURNING id, position, title, unit_price_cents, quantity, tangible)
       SELECT sale.*, ${itemsJson('items i')} AS inserted_items FROM sale`,
      parameters,
    );
    return { sale: this.saleRows.hydrate(rows[0]), items: lookupItems(rows[0].inserted_items) };
  }

  /**
   * The sale with its items in one plain query, for lookups (the hot GET /api/transactions/{id}): no
   * second round trip for the items, no entity transformation, and straight through the pool (poolQuery).
   */
  async findForLookup(id: number): Promise<{ sale: SaleLookup; items: SaleLookupItem[] } | null> {
    const [row] = await poolQuery<SaleLookupRow>(
      this.dataSource,
      `SELECT s.id, s.seller_id, s.status, s.payment_method, s.amount_cents, s.net_amount_cents, s.system_fee_cents,
              s.reserve_amount_cents, s.installments, s.customer_name, s.customer_email, s.customer_document_number,
              s.customer_phone, s.pix_code, s.card_last_four, s.card_brand, s.acquirer_return_code, s.acquirer_return_message,
              s.boleto_code, s.external_transaction_id, s.shipping, s.created_at, s.completed_at,
              ${itemsJson('sale_items i WHERE i.sale_id = s.id')} AS items
         FROM sales s WHERE s.id = $1`,
      [id],
    );
    if (!row) return null;
    return {
      sale: {
        id: row.id,
        sellerId: row.seller_id,
        status: row.status,
        paymentMethod: row.payment_method,
        amountCents: cents(Number(row.amount_cents)),
        netAmountCents: centsOrNull(row.net_amount_cents),
        systemFeeCents: centsOrNull(row.system_fee_cents),
        reserveAmountCents: centsOrNull(row.reserve_amount_cents),
        installments: row.installments,
        customerName: row.customer_name,
        customerEmail: row.customer_email,
        customerDocumentNumber: row.customer_document_number,
        customerPhone: row.customer_phone,
        pixCode: row.pix_code,
        cardLastFour: row.card_last_four,
        cardBrand: row.card_brand,
        acquirerReturnCode: row.acquirer_return_code,
        acquirerReturnMessage: row.acquirer_return_message,
        boletoCode: row.boleto_code,
        externalTransactionId: row.external_transaction_id,
        shipping: row.shipping,
        createdAt: row.created_at,
        completedAt: row.completed_at,
      },
      items: lookupItems(row.items),
    };
  }

  /** The sale, without its card token. */
  async findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SaleEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query(`SELECT ${this.saleRows.columnList()} FROM sales WHERE id = $1`, [id]);
    return rows.length === 0 ? null : this.saleRows.hydrate(rows[0]);
  }

  /** The sales with these ids, with their card tokens, locked for this transaction, in id order (one plain query). */
  async findByIdsForUpdate(ids: number[], manager: EntityManager): Promise<SaleEntity[]> {
    if (ids.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM sales WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE', [ids]);
    return rows.map((row) => this.saleRows.hydrate(row, true));
  }

  /**
   * The open charges (PENDENTE, or FALHA that a retry could still pay) of these subscriptions, each of
   * one period or (null) of all, locked for this transaction, in id order (one query).
   */
  async findOpenChargesForUpdate(targets: Array<{ subscriptionId: number; period: number | null }>, manager: EntityManager): Promise<SaleEntity[]> {
    if (targets.length === 0) return [];
    const rows: Array<Record<string, unknown>> = await manager.query(
      `SELECT s.* FROM sales s JOIN unnest($1::int[], $2::int[]) AS t(subscription_id, period) ON s.subscription_id = t.subscription_id
        WHERE s.status IN ('PENDENTE', 'FALHA') AND (t.period IS NULL OR s.billing_period = t.period)
        ORDER BY s.id FOR UPDATE OF s`,
      [targets.map((t) => t.subscriptionId), targets.map((t) => t.period)],
    );
    return rows.map((row) => this.saleRows.hydrate(row, true));
  }

  async itemsOf(saleId: number, manager: EntityManager = this.dataSource.manager): Promise<SaleItemEntity[]> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM sale_items WHERE sale_id = $1 ORDER BY position', [saleId]);
    return rows.map((row) => this.itemRows.hydrate(row));
  }

  /** One page of the seller's sales, newest first, and how many match in all. */
  async page(sellerId: number, filters: SaleFilters, page: number, limit: number): Promise<{ rows: SaleEntity[]; total: number }> {
    const filter = new RowFilter('sales');
    filter.where(`seller_id = ${filter.param(sellerId)}`);
    if (filters.status) filter.where(`status = ${filter.param(filters.status)}`);
    if (filters.paymentMethod) filter.where(`payment_method = ${filter.param(filters.paymentMethod)}`);
    if (filters.search) {
      const pattern = filter.param(containsPattern(filters.search));
      const id = filter.param(/^\d{1,9}$/.test(filters.search) ? Number(filters.search) : -1);
      filter.where(`(customer_name ILIKE ${pattern} OR customer_email ILIKE ${pattern} OR customer_document_number ILIKE ${pattern} OR id = ${id})`);
    }
    createdWithin(filter, filters);
    const total = await countMatching(this.dataSource.manager, filter);
    return { rows: (await newestFirstPage(this.dataSource.manager, this.saleRows, filter, { page }, limit)).rows, total };
  }

  /** Amount and count of the seller's sales PAGO now, by the Brazilian day (UTC-3) they were paid, from `since` on. */
  async paidPerDay(sellerId: number, since: Date): Promise<Array<{ day: string; amountCents: Cents; count: number }>> {
    const rows: Array<{ day: string; amount: string; count: string }> = await this.dataSource.query(
      `SELECT to_char(completed_at - interval '3 hours', 'YYYY-MM-DD') AS day, SUM(amount_cents) AS amount, COUNT(*) AS count
         FROM sales
        WHERE seller_id = $1 AND status = 'PAGO' AND completed_at >= $2
        GROUP BY 1`,
      [sellerId, since],
    );
    return rows.map((row) => ({ day: row.day, amountCents: cents(Number(row.amount)), count: Number(row.count) }));
  }

  /** The sale's status history, oldest first, with who recorded each move made on someone's word. */
  statusHistory(saleId: number): Promise<SaleStatusChange[]> {
    return this.dataSource.query(
      `SELECT previous_status AS "previousStatus", status, changed_at AS "changedAt", recorded_by AS "recordedBy", reason
         FROM sale_status_changes WHERE sale_id = $1 ORDER BY id`,
      [saleId],
    );
  }

  /** Marks these sales' reserves settled at `now`, in one statement (the reserve release job's batch). */
  async settleReserves(ids: number[], now: Date, manager: EntityManager): Promise<void> {
    if (ids.length === 0) return;
    await manager.query(`UPDATE sales SET reserve_settled_at = $2, updated_at = now() WHERE id = ANY($1::int[])`, [ids, now]);
  }

  /** Ids of the seller's (or every seller's) PENDENTE sales whose expiry has passed, locked and skipped by other workers; a real issuer's boletos end only on its word (BoletoPaymentsService). */
  async claimExpired(now: Date, sellerId: number | null, limit: number, manager: EntityManager): Promise<number[]> {
    const rows: Array<{ id: number }> = await manager.query(
      `SELECT id FROM sales
        WHERE status = 'PENDENTE' AND expires_at IS NOT NULL AND expires_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
          AND (payment_method <> 'BOLETO' OR provider = 'sandbox')
        ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, sellerId, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Ids of PAGO sales whose card reserve is due for release. */
  async claimReservesDue(now: Date, sellerId: number | null, limit: number, manager: EntityManager): Promise<number[]> {
    const rows: Array<{ id: number }> = await manager.query(
      `SELECT id FROM sales
        WHERE status = 'PAGO' AND reserve_settled_at IS NULL AND reserve_release_due_at IS NOT NULL
          AND reserve_release_due_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
        ORDER BY reserve_release_due_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, sellerId, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Ids of card sales EM_PROCESSAMENTO for more than `ageSeconds` by the database's clock (never a
   * caller's), that no recovery pass looked at in the last minute, each leased for a minute
   * (provider_checked_at) so that instances running the job together never ask the provider about the
   * same sale at once. The lease is committed at once: the provider is then asked outside any transaction.
   */
  /**
   * `sentAt`: when the sale was written EM_PROCESSAMENTO (updated_at: nothing else writes a sale in that
   * status but its lease, which leaves updated_at alone), just before its charge was sent.
   */
  async claimStuckInProcessing(ageSeconds: number, sellerId: number | null, limit: number, providers: readonly string[]): Promise<Array<{ id: number; provider: string; sentAt: Date }>> {
    const rows = await RECOVERY_LEASE.claim<{ id: number; provider: string; updated_at: Date }>(
      this.dataSource,
      `SELECT id FROM sales
        WHERE status = 'EM_PROCESSAMENTO' AND updated_at <= now() - make_interval(secs => $1) AND ($2::int IS NULL OR seller_id = $2)
          AND provider = ANY($4::varchar[]) AND ${RECOVERY_LEASE.free()}
        ORDER BY updated_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [ageSeconds, sellerId, limit, providers],
      ['id', 'provider', 'updated_at'],
    );
    return rows.map(({ id, provider, updated_at }) => ({ id, provider, sentAt: new Date(updated_at) }));
  }

  /** Card sales of these subscriptions whose charge is between its two commits (EM_PROCESSAMENTO), in id order; `sentAt` as claimStuckInProcessing's. */
  async inProcessingOfSubscriptions(subscriptionIds: number[]): Promise<Array<{ id: number; provider: string; sentAt: Date }>> {
    if (subscriptionIds.length === 0) return [];
    return this.dataSource.query(`SELECT id, provider, updated_at AS "sentAt" FROM sales WHERE subscription_id = ANY($1::int[]) AND status = 'EM_PROCESSAMENTO' ORDER BY id`, [subscriptionIds]);
  }

  /** Sales still PAGO that are marked to be refunded: among `ids`, or (null) the oldest `limit` of all (of one seller, or all). */
  async findRefundsDue(ids: number[] | null, sellerId: number | null, limit: number, providers: readonly string[]): Promise<Array<{ id: number; sellerId: number; provider: string; amountCents: Cents }>> {
    if (ids !== null && ids.length === 0) return [];
    const rows: Array<{ id: number; sellerId: number; provider: string; amountCents: string }> = await this.dataSource.query(
      `SELECT id, seller_id AS "sellerId", provider, amount_cents AS "amountCents" FROM sales
        WHERE refund_due_at IS NOT NULL AND status = 'PAGO' AND ($1::int[] IS NULL OR id = ANY($1::int[])) AND ($2::int IS NULL OR seller_id = $2)
          AND provider = ANY($4::varchar[])
        ORDER BY refund_due_at LIMIT $3`,
      [ids, sellerId, limit, providers],
    );
    return rows.map((row) => ({ ...row, amountCents: cents(Number(row.amountCents)) }));
  }

  /**
   * Takes claimStuckInProcessing's lease (provider_checked_at, a minute) on these sales still
   * EM_PROCESSAMENTO: the recovery job leaves them alone while a billing batch has their charges still
   * to make. Renewed while the batch runs; given back by releaseFromRecoveryHold.
   */
  async holdFromRecovery(ids: number[], manager: EntityManager = this.dataSource.manager): Promise<void> {
    await RECOVERY_LEASE.hold(manager, ids, `status = 'EM_PROCESSAMENTO'`);
  }

  /**
   * Gives these sales back to the recovery job at once: those still EM_PROCESSAMENTO are then resolved by
   * their age alone. Only those: a sale that has left EM_PROCESSAMENTO never returns to it and is never
   * claimed again, so its lease is left to lapse (a billing batch's 500 answered sales are not rewritten
   * once more for it).
   */
  async releaseFromRecoveryHold(ids: number[]): Promise<void> {
    await RECOVERY_LEASE.release(this.dataSource, ids, `status = 'EM_PROCESSAMENTO'`);
  }

  // ---- batches (the subscription billing) ----

  /** `count` new sale ids from the sequence, in one round trip. */
  async nextIds(count: number): Promise<number[]> {
    if (count === 0) return [];
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT nextval(pg_get_serial_sequence('sales', 'id')) AS id FROM generate_series(1, $1)`,
      [count],
    );
    return rows.map((row) => Number(row.id));
  }

  /**
   * Writes the sales (each under the id taken by nextIds) with their items and first status in three
   * multi-row statements; a sale whose (subscription, period, attempt) exists already is skipped, with
   * its items. `historyOf` gives the statuses a sale went through before its own, as insert's `history`.
   * With `heldFromRecovery`, a card sale written already sent to the acquirer (EM_PROCESSAMENTO) is
   * written held from the recovery job (its lease taken in the insert, as holdFromRecovery would take
   * it after: for a caller that charges it after its commit). The sales written, as entities (from the
   * insert's own rows), in id order.
   */
  async insertManyIfAbsent(
    sales: Array<Partial<SaleEntity> & { id: number; status: SaleStatus }>,
    itemsOf: (saleId: number) => Array<Partial<SaleItemEntity>>,
    manager: EntityManager,
    historyOf: (saleId: number) => SaleStatus[] = () => [],
    options: { heldFromRecovery?: boolean } = {},
  ): Promise<SaleEntity[]> {
    const rows = await insertRows(manager, SaleEntity, sales, {
      ignoreConflicts: true,
      returning: '*',
      computed: options.heldFromRecovery ? { [RECOVERY_LEASE.column]: `CASE WHEN v."status" = 'EM_PROCESSAMENTO' THEN now() END` } : {},
    });
    const written = new Map(rows.map((row) => [Number(row.id), this.saleRows.hydrate(row)]));
    const kept = sales.filter((sale) => written.has(sale.id));
    if (kept.length === 0) return [];
    await this.recordStatuses(
      kept.flatMap((sale) => {
        const lines = [...historyOf(sale.id), sale.status];
        return lines.map((status, index) => ({ saleId: sale.id, previous: index === 0 ? null : lines[index - 1], status }));
      }),
      manager,
    );
    await insertRows(
      manager,
      SaleItemEntity,
      kept.flatMap((sale) => itemsOf(sale.id).map((item, position) => ({ ...item, saleId: sale.id, position }))),
    );
    return kept.map((sale) => written.get(sale.id) as SaleEntity).sort((a, b) => a.id - b.id);
  }

  /**
   * Sales' moves added to `statement` (the only way a sale's status is moved), each written only if its
   * sale is still in its `expected` status and while `gate` holds, with one line of status history each,
   * signed with who recorded the move and why when someone did (an operator's dispute event). Answers a
   * condition that every move was saved (no sale moved by someone else first), to gate the statement's
   * other writes on.
   */
  addStatusMoves(
    statement: CteStatement,
    moves: Array<{ id: number; expected: SaleStatus; changes: Partial<SaleEntity> & { status: SaleStatus }; author?: StatusChangeAuthor }>,
    gate: string,
  ): string {
    if (moves.length === 0) return 'true';
    const written = addRowUpdates(
      statement,
      this.dataSource.getMetadata(SaleEntity),
      moves.map((move) => ({
        id: move.id,
        changes: move.changes,
        expectedStatus: move.expected,
        line: { recorded_by: move.author?.recordedBy ?? null, reason: move.author?.reason ?? null },
      })),
      { history: { table: 'sale_status_changes', key: 'sale_id', columns: ['recorded_by', 'reason'] }, gate },
    );
    return `((${written.map((name) => `(SELECT count(*) FROM ${name})`).join(' + ')}) = ${moves.length})`;
  }

  /** The items of these sales by sale, each in position order (one query). */
  async itemsOfMany(saleIds: number[], manager: EntityManager): Promise<Map<number, SaleItemEntity[]>> {
    const items = new Map<number, SaleItemEntity[]>(saleIds.map((id) => [id, []]));
    if (saleIds.length === 0) return items;
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM sale_items WHERE sale_id = ANY($1::int[]) ORDER BY sale_id, position', [saleIds]);
    for (const item of rows.map((row) => this.itemRows.hydrate(row))) items.get(item.saleId)?.push(item);
    return items;
  }

  /** Lines of status history of many sales, in the transaction of their changes (one statement). */
  private async recordStatuses(changes: Array<{ saleId: number; previous: SaleStatus | null; status: SaleStatus }>, manager: EntityManager): Promise<void> {
    if (changes.length === 0) return;
    await manager.query(
      `INSERT INTO sale_status_changes (sale_id, previous_status, status)
       SELECT * FROM unnest($1::int[], $2::varchar[], $3::varchar[])`,
      [changes.map((c) => c.saleId), changes.map((c) => c.previous), changes.map((c) => c.status)],
    );
  }

  // ---- refund totals (RefundsService) ----

  /** Counts a completed refund on its sale: what its completed refunds add up to afterwards. */
  async addRefundCompleted(saleId: number, amountCents: Cents, manager: EntityManager): Promise<Cents> {
    const [[row]] = await manager.query(`UPDATE sales SET refund_completed_cents = refund_completed_cents + $2, updated_at = now() WHERE id = $1 RETURNING refund_completed_cents`, [saleId, amountCents]);
    return cents(Number(row.refund_completed_cents));
  }

  async addRefunded(saleId: number, deltaCents: number, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE sales SET refunded_cents = refunded_cents + $2, updated_at = now() WHERE id = $1`, [saleId, deltaCents]);
  }

  // ---- charges at the PSP: Pix Automático's recurring charges (AutomaticPixService), closed charges (PixReconciliationService) ----

  /**
   * Ids of renewals (and journey-2 first charges) whose recurring charge is due to be sent by `sendBy`
   * (YYYY-MM-DD), not sent yet, each leased (AUTOMATIC_PIX_CHARGE_SEND) so that no other instance sends it meanwhile.
   * Not the charge of a period a cancellation scheduled at or before its due date never gives (a
   * journey-2 trial cancelled at its end: nextBillingDate, and so the period's end, is trialEndsAt).
   */
  async claimAutomaticPixChargesToSend(sendBy: string, sellerId: number | null, limit: number, providers: readonly string[]): Promise<number[]> {
    const claimed = await AUTOMATIC_PIX_CHARGE_SEND.claim(
      this.dataSource,
      `SELECT id FROM sales
        WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NULL
          AND automatic_pix_due_date <= $1 AND ($2::int IS NULL OR seller_id = $2) AND provider = ANY($4::varchar[]) AND ${AUTOMATIC_PIX_CHARGE_SEND.free()}
          AND EXISTS (SELECT 1 FROM subscriptions sub WHERE sub.id = sales.subscription_id AND sub.automatic_pix_status IS DISTINCT FROM 'PENDING'
                        AND NOT (sub.scheduled_cancellation_date IS NOT NULL AND sales.billing_period = sub.current_period
                                 AND sub.scheduled_cancellation_date <= sub.period_due_at))
        ORDER BY automatic_pix_due_date LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [sendBy, sellerId, limit, providers],
    );
    return claimed.map((row) => row.id);
  }

  /** Gives back the send lease of charges whose sending failed, so that the next pass tries them at once. */
  async releaseAutomaticPixChargesToSend(saleIds: number[]): Promise<void> {
    await AUTOMATIC_PIX_CHARGE_SEND.release(this.dataSource, saleIds);
  }

  /**
   * Boletos of these issuers to ask about now (of one seller, or all), each leased: open ones (PENDENTE)
   * first, then ones cancelled unpaid less than `lateWatchDays` ago with no late payment booked, in two
   * claims each served by its own index (sales_open_boletos_idx; sales_cancelled_boletos_idx by expires_at,
   * so that the boletos cancelled long ago, which only grow, are never read again). `now` (the jobs'
   * instant, the sandbox clock's in tests) says which are past the time they are cancelled at; the lease
   * is the database's clock.
   */
  async claimIssuedBoletos(sellerId: number | null, limit: number, providers: readonly string[], pollSeconds: number, lateWatchDays: number, now: Date): Promise<ClaimedBoleto[]> {
    if (providers.length === 0) return [];
    const returning = ['id', 'provider', 'external_transaction_id'] as const;
    const open = await BOLETO_POLL.claim<{ id: number; provider: string; external_transaction_id: string }>(
      this.dataSource,
      `SELECT s.id FROM sales s
        WHERE s.payment_method = 'BOLETO' AND s.provider <> 'sandbox' AND s.status = 'PENDENTE' AND s.provider = ANY($3::varchar[])
          AND ($1::int IS NULL OR s.seller_id = $1) AND s.external_transaction_id IS NOT NULL
          AND (${BOLETO_POLL.free('s')} OR (s.expires_at <= $5 AND s.provider_checked_at < now() - interval '1 minute'))
        ORDER BY s.provider, s.provider_checked_at NULLS FIRST LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit, providers, pollSeconds, now],
      returning,
    );
    const cancelled =
      open.length >= limit
        ? []
        : await BOLETO_POLL.claim<{ id: number; provider: string; external_transaction_id: string }>(
            this.dataSource,
            `SELECT s.id FROM sales s
              WHERE s.payment_method = 'BOLETO' AND s.provider <> 'sandbox' AND s.status = 'CANCELADO' AND s.provider = ANY($3::varchar[])
                AND s.expires_at > $6::timestamptz - make_interval(days => $5)
                AND ($1::int IS NULL OR s.seller_id = $1) AND s.external_transaction_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM late_boleto_payments l WHERE l.sale_id = s.id) AND ${BOLETO_POLL.free('s')}
              ORDER BY s.provider, s.expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [sellerId, limit - open.length, providers, pollSeconds, lateWatchDays, now],
            returning,
          );
    return [...open, ...cancelled].map((row) => ({ id: Number(row.id), provider: row.provider, externalId: row.external_transaction_id }));
  }

  /** Ids of sent recurring charges still open (PENDENTE), each leased for a minute so that instances never ask about one together. */
  async claimOpenAutomaticPixCharges(sellerId: number | null, limit: number, providers: readonly string[]): Promise<number[]> {
    const claimed = await AUTOMATIC_PIX_CHARGE_POLL.claim(
      this.dataSource,
      `SELECT id FROM sales WHERE automatic_pix_due_date IS NOT NULL AND status = 'PENDENTE' AND automatic_pix_sent_at IS NOT NULL
          AND ($1::int IS NULL OR seller_id = $1) AND provider = ANY($3::varchar[]) AND ${AUTOMATIC_PIX_CHARGE_POLL.free()}
        ORDER BY automatic_pix_due_date LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [sellerId, limit, providers],
    );
    return claimed.map((row) => row.id);
  }

  /** The charge is at the PSP: its send lease given back, so that the open-charge poll may ask about it at once. */
  async markAutomaticPixSent(saleId: number, at: Date): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET automatic_pix_sent_at = $2, automatic_pix_checked_at = NULL WHERE id = $1 AND automatic_pix_sent_at IS NULL`, [saleId, at]);
  }

  async markAutomaticPixRetryAsked(saleId: number, retries: number): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET automatic_pix_retries = $2 WHERE id = $1`, [saleId, retries]);
  }

  /** The sale's charge is closed at the PSP, at `at` (a recurring charge cancelled there). */
  async markPixChargeClosed(saleId: number, at: Date): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET pix_charge_closed_at = $2 WHERE id = $1`, [saleId, at]);
  }

  /** The sale's charge is closed at the PSP, at the database's now() (a cancelled sale's charge removed there by reconciliation). */
  async markPixChargeClosedNow(saleId: number): Promise<void> {
    await this.dataSource.query(`UPDATE sales SET pix_charge_closed_at = now() WHERE id = $1`, [saleId]);
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
  async scheduleAutomaticPixFirstCharge(saleId: number, dueDate: string, expiresAt: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE sales SET automatic_pix_due_date = $2, expires_at = $3 WHERE id = $1 AND status = 'PENDENTE'`, [saleId, dueDate, expiresAt]);
  }
}
