import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { poolQuery } from '../database/plain-rows';
import { Cents, cents } from '../domain/money';
import { LedgerAccount, LedgerEntryKind, LedgerReferenceType } from '../domain/ledger';

export interface BalanceRow {
  availableCents: Cents;
  blockedCents: Cents;
}

export interface BalanceWithDate extends BalanceRow {
  updatedAt: Date;
}

/** What a posting says of the seller: its cause, the seller's moves, and the balance after it. */
export interface PostingFigures {
  kind: LedgerEntryKind;
  referenceType: LedgerReferenceType;
  referenceId: number;
  availableDeltaCents: number;
  blockedDeltaCents: number;
  availableAfterCents: number;
  blockedAfterCents: number;
}

/** A posting to write: its seller and figures (the balance after it is derived as it is written), and its entries (summing to zero). */
export interface NewPosting extends Omit<PostingFigures, 'availableAfterCents' | 'blockedAfterCents'> {
  /** Null for the platform's own postings (a Pix with no sale), which move no seller's balance. */
  sellerId: number | null;
  entries: Array<{ account: LedgerAccount; provider: string | null; amountCents: number }>;
}

/** Where a statement page starts: after this posting (its exact created_at as PostgreSQL writes it, and id). */
export interface StatementCursor {
  at: string;
  id: number;
}

export interface StatementRange {
  from?: Date;
  before?: Date;
  after?: StatementCursor;
  limit: number;
}

export interface StatementRow extends PostingFigures {
  id: number;
  createdAt: Date;
  cursor: StatementCursor;
}

export interface DoubleEntryReport {
  postings: number;
  entries: number;
  unbalancedPostings: Array<{ postingId: number; sumCents: number }>;
  ledgerSumCents: number;
  inconsistentPostings: number[];
  entriesWithoutPosting: number;
  brokenChains: number[];
  balancesOffLastPosting: number[];
  accounts: Array<{ account: LedgerAccount; provider: string | null; sumCents: number }>;
}

export interface BalanceMismatch {
  sellerId: number;
  availableCents: number;
  blockedCents: number;
  ledgerAvailableCents: number;
  ledgerBlockedCents: number;
}

@Injectable()
export class LedgerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The seller's balances row, created at zero if missing, locked until the transaction ends. */
  async lockBalance(sellerId: number, manager: EntityManager): Promise<BalanceRow> {
    const lock = () =>
      manager.query(`SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1 FOR UPDATE`, [sellerId]) as Promise<
        Array<{ available_cents: string; blocked_cents: string }>
      >;
    // One round trip when the row exists (every seller opens it when created); created first otherwise.
    let [row] = await lock();
    if (!row) {
      await this.createBalance(sellerId, manager);
      [row] = await lock();
    }
    return { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)) };
  }

  /**
   * The seller's available balance read into `statement` under its row's lock (FOR UPDATE: a concurrent
   * move of the row is waited for and its committed value read), held until the statement's transaction
   * ends: a condition on it cannot be overtaken before the statement's own posting moves the row. No
   * row when the seller has no balances row. Answers the CTE's name (a column `available_cents`).
   */
  addLockedBalance(statement: CteStatement, sellerId: number): string {
    return statement.with(statement.name('locked'), `SELECT available_cents FROM balances WHERE seller_id = ${statement.param(sellerId)} FOR UPDATE`);
  }

  /** The seller's balances row, or null when it has none yet (one SELECT, no write). */
  async findBalance(sellerId: number, manager?: EntityManager): Promise<BalanceWithDate | null> {
    const sql = `SELECT available_cents, blocked_cents, updated_at FROM balances WHERE seller_id = $1`;
    type Row = { available_cents: string; blocked_cents: string; updated_at: Date };
    // Outside a transaction (GET /api/public/balance), straight through the pool.
    const [row] = manager ? ((await manager.query(sql, [sellerId])) as Row[]) : await poolQuery<Row>(this.dataSource, sql, [sellerId]);
    return row ? { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)), updatedAt: row.updated_at } : null;
  }

  /** Creates the seller's zero balance if it is missing. */
  async createBalance(sellerId: number, manager: EntityManager): Promise<void> {
    await manager.query(`INSERT INTO balances (seller_id) VALUES ($1) ON CONFLICT (seller_id) DO NOTHING`, [sellerId]);
  }

  /**
   * The balances rows of these sellers, created at zero where missing, locked until the transaction
   * ends, in seller order (so that two batches never wait on each other's rows in a cycle): each
   * seller's balance before the caller's postings.
   */
  async lockBalances(sellerIds: number[], manager: EntityManager): Promise<Map<number, BalanceRow>> {
    if (sellerIds.length === 0) return new Map();
    const sorted = [...new Set(sellerIds)].sort((a, b) => a - b);
    const lock = async () =>
      (await manager.query(
        `SELECT seller_id, available_cents, blocked_cents FROM balances WHERE seller_id = ANY($1::int[]) ORDER BY seller_id FOR UPDATE`,
        [sorted],
      )) as Array<{ seller_id: number; available_cents: string; blocked_cents: string }>;
    let rows = await lock();
    if (rows.length !== sorted.length) {
      await manager.query(`INSERT INTO balances (seller_id) SELECT unnest($1::int[]) ORDER BY 1 ON CONFLICT (seller_id) DO NOTHING`, [sorted]);
      rows = await lock();
    }
    return new Map(rows.map((row) => [row.seller_id, { availableCents: cents(Number(row.available_cents)), blockedCents: cents(Number(row.blocked_cents)) }]));
  }

  /** A condition of `statement`: every seller of these postings has its balances row (read in the statement's snapshot). */
  balancesPresent(statement: CteStatement, postings: NewPosting[]): string {
    const sellers = [...new Set(postings.flatMap((posting) => (posting.sellerId === null ? [] : [posting.sellerId])))];
    const present = statement.with(
      statement.name('present'),
      `SELECT count(*) = ${statement.param(sellers.length)}::int AS ok FROM balances WHERE seller_id = ANY(${statement.param(sellers)}::int[])`,
    );
    return `(SELECT ok FROM ${present})`;
  }

  /**
   * The postings with their entries added to `statement`, written only while `gate` holds (with
   * balancesPresent among its conditions): each seller's balances row moved once by the sum of its
   * postings (the UPDATE takes the row lock, held until the commit), each posting's balance after it
   * derived from the row's value before them plus the running sum of the seller's postings up to it,
   * the postings' ids from their sequence in the order given and the insert time as created_at (under
   * the seller's balance lock, so a seller's postings are in order of both). The trigger
   * ledger_entries_balanced refuses the statement if a posting's entries do not sum to zero.
   */
  addPostings(statement: CteStatement, postings: NewPosting[], gate: string): void {
    const entries = postings.flatMap((posting, index) => posting.entries.map((entry) => ({ ...entry, ord: index + 1 })));
    const list = <T>(values: T[], type: string) => `${statement.param(values)}::${type}[]`;
    const v = statement.with(
      statement.name('posting'),
      `SELECT * FROM unnest(${list(postings.map((p) => p.sellerId), 'int')}, ${list(postings.map((p) => p.kind), 'varchar')}, ${list(postings.map((p) => p.referenceType), 'varchar')},
                            ${list(postings.map((p) => p.referenceId), 'bigint')}, ${list(postings.map((p) => p.availableDeltaCents), 'bigint')}, ${list(postings.map((p) => p.blockedDeltaCents), 'bigint')})
              WITH ORDINALITY AS v(seller_id, kind, reference_type, reference_id, available_delta, blocked_delta, ord)
        WHERE ${gate}`,
    );
    const sums = statement.with(
      statement.name('sums'),
      `SELECT seller_id, sum(available_delta)::bigint AS available, sum(blocked_delta)::bigint AS blocked FROM ${v} WHERE seller_id IS NOT NULL GROUP BY seller_id`,
    );
    const moved = statement.with(
      statement.name('balance'),
      `UPDATE balances b SET available_cents = b.available_cents + s.available, blocked_cents = b.blocked_cents + s.blocked, updated_at = now()
         FROM ${sums} s WHERE b.seller_id = s.seller_id
       RETURNING b.seller_id, b.available_cents - s.available AS available_before, b.blocked_cents - s.blocked AS blocked_before`,
    );
    const ids = statement.with(
      statement.name('posting_id'),
      `SELECT w.*, nextval('ledger_postings_id_seq') AS id, clock_timestamp() AS at
         FROM (SELECT v.*, (m.available_before + sum(v.available_delta) OVER running)::bigint AS available_after,
                      (m.blocked_before + sum(v.blocked_delta) OVER running)::bigint AS blocked_after
                 FROM ${v} v LEFT JOIN ${moved} m ON m.seller_id = v.seller_id
               WINDOW running AS (PARTITION BY v.seller_id ORDER BY v.ord)
                ORDER BY v.ord) w`,
    );
    statement.with(
      statement.name('posted'),
      `INSERT INTO ledger_postings (id, seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents,
                                    available_after_cents, blocked_after_cents, created_at)
       SELECT id, seller_id, kind, reference_type, reference_id, available_delta, blocked_delta, available_after, blocked_after, at FROM ${ids}`,
    );
    statement.with(
      statement.name('entries'),
      `INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id)
       SELECT ids.id, ids.seller_id, e.account, e.provider, e.amount, ids.kind, ids.reference_type, ids.reference_id
         FROM unnest(${list(entries.map((e) => e.ord), 'bigint')}, ${list(entries.map((e) => e.account), 'varchar')}, ${list(entries.map((e) => e.provider), 'varchar')},
                     ${list(entries.map((e) => e.amountCents), 'bigint')}) WITH ORDINALITY AS e(ord, account, provider, amount, n)
         JOIN ${ids} ids ON ids.ord = e.ord
        ORDER BY e.n`,
    );
  }

  /** Creates the zero balances rows of these sellers where missing (in seller order). */
  async createBalances(sellerIds: number[], manager: EntityManager): Promise<void> {
    await manager.query(`INSERT INTO balances (seller_id) SELECT unnest($1::int[]) ORDER BY 1 ON CONFLICT (seller_id) DO NOTHING`, [[...sellerIds].sort((a, b) => a - b)]);
  }

  /** Sellers whose cached balance differs from the sum of their entries. */
  mismatches(): Promise<BalanceMismatch[]> {
    return this.dataSource
      .query(
        `SELECT b.seller_id, b.available_cents, b.blocked_cents,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0) AS ledger_available,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0) AS ledger_blocked
           FROM balances b LEFT JOIN ledger_entries e ON e.seller_id = b.seller_id
          GROUP BY b.seller_id, b.available_cents, b.blocked_cents
         HAVING b.available_cents <> COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0)
             OR b.blocked_cents <> COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0)
         UNION ALL
         SELECT e.seller_id, 0, 0,
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'AVAILABLE'), 0),
                COALESCE(SUM(e.amount_cents) FILTER (WHERE e.account = 'BLOCKED'), 0)
           FROM ledger_entries e WHERE e.seller_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM balances b WHERE b.seller_id = e.seller_id)
          GROUP BY e.seller_id
         ORDER BY 1`,
      )
      .then((rows: Array<Record<string, string | number>>) =>
        rows.map((row) => ({
          sellerId: Number(row.seller_id),
          availableCents: Number(row.available_cents),
          blockedCents: Number(row.blocked_cents),
          ledgerAvailableCents: Number(row.ledger_available),
          ledgerBlockedCents: Number(row.ledger_blocked),
        })),
      );
  }

  /**
   * One page of the seller's statement: its postings that moved its balance, newest first, created in
   * [from, before), after the cursor (created_at, id) of the previous page. One index range scan of
   * ledger_postings_statement_idx, whatever the seller's history.
   */
  async statementPage(sellerId: number, range: StatementRange): Promise<StatementRow[]> {
    const rows: Array<Record<string, string>> = await this.dataSource.query(
      `SELECT id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents,
              created_at, created_at::text AS cursor_at
         FROM ledger_postings
        WHERE seller_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
          AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $5::bigint))
          AND (available_delta_cents <> 0 OR blocked_delta_cents <> 0)
        ORDER BY created_at DESC, id DESC LIMIT $6`,
      [sellerId, range.from ?? null, range.before ?? null, range.after?.at ?? null, range.after?.id ?? null, range.limit],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      kind: row.kind as LedgerEntryKind,
      referenceType: row.reference_type as LedgerReferenceType,
      referenceId: Number(row.reference_id),
      availableDeltaCents: Number(row.available_delta_cents),
      blockedDeltaCents: Number(row.blocked_delta_cents),
      availableAfterCents: Number(row.available_after_cents),
      blockedAfterCents: Number(row.blocked_after_cents),
      createdAt: row.created_at as unknown as Date,
      cursor: { at: row.cursor_at, id: Number(row.id) },
    }));
  }

  /** Each account's (and provider's) sum of the entries written in [from, before). */
  async accountSums(from: Date, before: Date): Promise<Array<{ account: LedgerAccount; provider: string | null; sumCents: number }>> {
    const rows: Array<{ account: LedgerAccount; provider: string | null; sum: string }> = await this.dataSource.query(
      `SELECT account, provider, sum(amount_cents) AS sum FROM ledger_entries WHERE created_at >= $1 AND created_at < $2 GROUP BY account, provider ORDER BY account, provider`,
      [from, before],
    );
    return rows.map((row) => ({ account: row.account, provider: row.provider, sumCents: Number(row.sum) }));
  }

  /**
   * What ledger:verify proves, as figures: postings and entries counted; postings whose entries do not
   * sum to zero; the whole ledger's sum; postings whose seller moves differ from their entries, or whose
   * balance-after does not follow the previous one; entries without a posting; each account's sum.
   */
  async doubleEntryReport(): Promise<DoubleEntryReport> {
    const [[counts], unbalanced, [total], inconsistent, [orphans], broken, accounts] = await Promise.all([
      this.dataSource.query(`SELECT (SELECT count(*) FROM ledger_postings) AS postings, (SELECT count(*) FROM ledger_entries) AS entries`),
      this.dataSource.query(`SELECT posting_id, sum(amount_cents) AS sum FROM ledger_entries GROUP BY posting_id HAVING sum(amount_cents) <> 0 ORDER BY posting_id LIMIT 20`),
      this.dataSource.query(`SELECT COALESCE(sum(amount_cents), 0) AS sum FROM ledger_entries`),
      this.dataSource.query(
        `SELECT p.id FROM ledger_postings p
           LEFT JOIN (SELECT posting_id, count(*) AS n,
                             COALESCE(sum(amount_cents) FILTER (WHERE account = 'AVAILABLE'), 0) AS available,
                             COALESCE(sum(amount_cents) FILTER (WHERE account = 'BLOCKED'), 0) AS blocked
                        FROM ledger_entries GROUP BY posting_id) e ON e.posting_id = p.id
          WHERE (e.n IS NULL AND (p.available_delta_cents <> 0 OR p.blocked_delta_cents <> 0))
             OR e.available <> p.available_delta_cents OR e.blocked <> p.blocked_delta_cents
          ORDER BY p.id LIMIT 20`,
      ),
      this.dataSource.query(`SELECT count(*) AS n FROM ledger_entries e WHERE NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.id = e.posting_id)`),
      this.dataSource.query(
        `SELECT id FROM (
           SELECT id, available_after_cents - available_delta_cents AS available_before, blocked_after_cents - blocked_delta_cents AS blocked_before,
                  lag(available_after_cents, 1, 0::bigint) OVER w AS available_previous, lag(blocked_after_cents, 1, 0::bigint) OVER w AS blocked_previous
             FROM ledger_postings WHERE seller_id IS NOT NULL WINDOW w AS (PARTITION BY seller_id ORDER BY id)) AS chain
          WHERE available_before <> available_previous OR blocked_before <> blocked_previous ORDER BY id LIMIT 20`,
      ),
      this.dataSource.query(`SELECT account, provider, sum(amount_cents) AS sum FROM ledger_entries GROUP BY account, provider ORDER BY account, provider`),
    ]);
    const lastAfter: Array<{ seller_id: number }> = await this.dataSource.query(
      `SELECT b.seller_id FROM balances b
         JOIN LATERAL (SELECT available_after_cents, blocked_after_cents FROM ledger_postings p WHERE p.seller_id = b.seller_id ORDER BY id DESC LIMIT 1) last ON true
        WHERE last.available_after_cents <> b.available_cents OR last.blocked_after_cents <> b.blocked_cents ORDER BY 1 LIMIT 20`,
    );
    return {
      postings: Number(counts.postings),
      entries: Number(counts.entries),
      unbalancedPostings: unbalanced.map((row: { posting_id: string; sum: string }) => ({ postingId: Number(row.posting_id), sumCents: Number(row.sum) })),
      ledgerSumCents: Number(total.sum),
      inconsistentPostings: inconsistent.map((row: { id: string }) => Number(row.id)),
      entriesWithoutPosting: Number(orphans.n),
      brokenChains: broken.map((row: { id: string }) => Number(row.id)),
      balancesOffLastPosting: lastAfter.map((row) => row.seller_id),
      accounts: accounts.map((row: { account: LedgerAccount; provider: string | null; sum: string }) => ({ account: row.account, provider: row.provider, sumCents: Number(row.sum) })),
    };
  }

  async countBalances(): Promise<number> {
    const [row]: Array<{ count: string }> = await this.dataSource.query(`SELECT count(*) AS count FROM balances`);
    return Number(row.count);
  }
}
