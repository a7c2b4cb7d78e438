import { Client } from 'pg';
import { SubscriptionsScheduler } from '../../src/subscriptions/subscriptions.scheduler';
import { createSeller, TestSeller } from './setup/factories';
import { seedEvents, seedLedger, seedSubscriptions } from './setup/large-data';
import { startApp, TestApp } from './setup/test-app';

/** CI's seed; bench/large-data.js measures the same routes over a million rows (BENCH_LARGE_ROWS). */
const ROWS = Number(process.env.LARGE_DATA_ROWS ?? 20_000);
const SIZES = { postings: ROWS, events: ROWS, subscriptions: Math.max(Math.round(ROWS / 5), 500) };

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

interface Statement {
  sql: string;
  parameters: unknown[];
}

const nodes = (node: PlanNode, found: PlanNode[] = []): PlanNode[] => {
  found.push(node);
  for (const child of node.Plans ?? []) nodes(child, found);
  return found;
};

/**
 * The reads of one seller with a long history (issue 24): a page of its statement, of its subscriptions
 * and of its events, first or deep, reached by cursor. Each walk is checked against the seeded rows (order,
 * nothing repeated, nothing skipped, a deep page's fields as SQL has them), and the SQL each route runs,
 * captured on its way to PostgreSQL, is planned: a range of an index on the seller, read in the index's
 * order (no Sort), no Seq Scan, no OFFSET, and a deep page reads about a page of rows.
 */
describe('Large-data reads: statement, subscriptions and events pages by cursor, served by an index range', () => {
  let t: TestApp;
  let seller: TestSeller;
  const originalQuery = Client.prototype.query;
  let captured: Statement[] | null = null;

  beforeAll(async () => {
    t = await startApp();
    seller = await createSeller(t);
    await t.db.transaction(async (manager) => {
      const query = (sql: string, parameters?: unknown[]) => manager.query(sql, parameters);
      await seedLedger(query, seller.id, SIZES.postings);
      await seedEvents(query, seller.id, SIZES.events);
      await seedSubscriptions(query, seller.id, SIZES.subscriptions);
    });
    // What autovacuum would have done by then: statistics, and the visibility map index-only scans use.
    await t.db.query('VACUUM ANALYZE ledger_postings, outbox_events, subscriptions');
    // Every statement sent to PostgreSQL while `captured` is set (the app runs in this process).
    Client.prototype.query = function (this: Client, ...args: unknown[]) {
      // A parameterized statement arrives prepared, as { name, text, values } (database/prepared-statements.ts).
      const [first, second] = args as [string | { text?: string; values?: unknown[] }, unknown];
      if (captured && typeof first === 'string') captured.push({ sql: first, parameters: Array.isArray(second) ? second : [] });
      else if (captured && typeof first === 'object' && typeof first.text === 'string') captured.push({ sql: first.text, parameters: first.values ?? [] });
      return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof Client.prototype.query;
  }, 120_000);

  afterAll(async () => {
    Client.prototype.query = originalQuery;
    // The seeded history goes with the seller's balance back to zero. The ledger is append-only: its
    // triggers are set aside for this one transaction (the suite's database is dropped at the end anyway).
    await t.db.transaction(async (manager) => {
      await manager.query('SET LOCAL session_replication_role = replica');
      await manager.query('DELETE FROM ledger_entries WHERE seller_id = $1', [seller.id]);
      await manager.query('DELETE FROM ledger_postings WHERE seller_id = $1', [seller.id]);
      await manager.query('DELETE FROM outbox_events WHERE seller_id = $1', [seller.id]);
      await manager.query('DELETE FROM subscriptions WHERE seller_id = $1', [seller.id]);
      await manager.query('DELETE FROM subscription_counts WHERE seller_id = $1', [seller.id]); // its triggers are set aside too
      await manager.query('UPDATE balances SET available_cents = 0, blocked_cents = 0 WHERE seller_id = $1', [seller.id]);
    });
    // Statistics of the tables as they are again: left as analyzed with the seed, they describe tens of
    // thousands of rows of one seller that are gone, and the planner of later files' queries (query-plans)
    // would price its index choices on them.
    await t.db.query('VACUUM ANALYZE ledger_entries, ledger_postings, outbox_events, subscriptions');
    await t.close();
  });

  /** The statements a request sent that read `table` for this seller. */
  async function statementsOf(path: string, table: string): Promise<Statement[]> {
    captured = [];
    try {
      await t.http.get(path).set(seller.headers).expect(200);
      return captured.filter((s) => s.sql.includes(table) && s.parameters.includes(seller.id));
    } finally {
      captured = null;
    }
  }

  /** Every page of a route, by its cursors: the ids in the order served, the pages, and the cursor of each page. */
  async function walk<T>(path: (cursor: string | null) => string, read: (body: Record<string, unknown>) => { items: T[]; next: string | null }) {
    const pages: T[][] = [];
    const cursors: Array<string | null> = [];
    let cursor: string | null = null;
    do {
      cursors.push(cursor);
      const { body } = await t.http.get(path(cursor)).set(seller.headers).expect(200);
      const page = read(body);
      pages.push(page.items);
      cursor = page.next;
      expect(pages.length).toBeLessThanOrEqual(ROWS); // a cursor that loops fails here, not by timeout
    } while (cursor !== null);
    return { pages, cursors };
  }

  /**
   * The plan of a captured statement, run (EXPLAIN ANALYZE, read-only SELECTs) with the parameters it was
   * sent with, sequential scans priced out. Its rows come from one Index Scan or Index Only Scan whose Index Cond holds the seller (and,
   * with `cursorCond`, the cursor), in the index's order: no Sort, no Seq Scan, no bitmap, no OFFSET. Any
   * other scan of the table fetches the rows picked by primary key. `maxRowsRead` bounds the rows each read (kept and filtered out); `indexOnly` asks for an Index Only Scan. Returns what is wrong, with the plan, so that a failure shows it.
   */
  async function planProblems(statement: Statement, table: string, options: { maxRowsRead?: number; cursorCond?: RegExp; indexOnly?: boolean } = {}): Promise<string[]> {
    const problems: string[] = [];
    if (/\bOFFSET\b/i.test(statement.sql)) problems.push('OFFSET in the SQL');
    // As in query-plans.e2e-spec.ts, sequential scans priced out: CI's tables are small enough for a Seq
    // Scan of the whole table to be priced below a page's lookups by primary key, which a million rows are not.
    const [{ 'QUERY PLAN': plan }]: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> = await t.db.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_seqscan = off');
      return manager.query(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${statement.sql}`, statement.parameters);
    });
    const all = nodes(plan[0].Plan);
    const describe = (node: PlanNode) =>
      `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}` +
      `${node['Index Cond'] ? ` [${node['Index Cond']}]` : ''} rows ${node['Actual Rows']}${node['Rows Removed by Filter'] ? ` (+${node['Rows Removed by Filter']} filtered)` : ''}`;
    // A lookup of the page's rows by primary key: an Index Scan on it, or a bitmap scan of it (the planner's
    // choice for a hundred ids, which then sorts those rows: a sort of one page, not of the seller's set).
    const byPrimaryKey = (node: PlanNode): boolean =>
      node['Index Name'] === `${table}_pkey` || (node['Node Type'] === 'Bitmap Heap Scan' && (node.Plans ?? []).every(byPrimaryKey));
    for (const node of all) {
      const type = node['Node Type'];
      const pageSort = type === 'Sort' && options.maxRowsRead !== undefined && (node['Actual Rows'] ?? 0) <= options.maxRowsRead;
      if (/Seq Scan/.test(type) || (type === 'Sort' && !pageSort) || (/Bitmap/.test(type) && !byPrimaryKey(node))) problems.push(describe(node));
    }
    const scans = all.filter((node) => node['Relation Name'] === table);
    const ranges = scans.filter((node) => /^Index (Only )?Scan$/.test(node['Node Type']) && node['Index Cond']?.includes(`seller_id = ${seller.id}`));
    if (ranges.length !== 1) problems.push(`${ranges.length} index ranges on the seller`);
    for (const range of ranges) {
      if (options.indexOnly && range['Node Type'] !== 'Index Only Scan') problems.push(`not index-only: ${describe(range)}`);
      if (options.cursorCond && !options.cursorCond.test(range['Index Cond'] ?? '')) problems.push(`no cursor in the range: ${describe(range)}`);
      const read = (range['Actual Rows'] ?? 0) + (range['Rows Removed by Filter'] ?? 0);
      if (options.maxRowsRead !== undefined && read > options.maxRowsRead) problems.push(`${read} rows read: ${describe(range)}`);
    }
    for (const scan of scans.filter((node) => !ranges.includes(node))) {
      const read = (scan['Actual Rows'] ?? 0) * (scan['Actual Loops'] ?? 1);
      if (!byPrimaryKey(scan)) problems.push(`not a lookup by primary key: ${describe(scan)}`);
      else if (options.maxRowsRead !== undefined && read > options.maxRowsRead) problems.push(`${read} rows looked up: ${describe(scan)}`);
    }
    return problems.length > 0 ? [...problems, `plan: ${all.map(describe).join(' > ')}`] : [];
  }

  describe('GET /api/public/balance/statement', () => {
    const LIMIT = 200;
    const path = (cursor: string | null) => `/api/public/balance/statement?limit=${LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
    type Line = { id: number; createdAt: string; kind: string; available: number; blocked: number; availableAfter: number; blockedAfter: number };
    const read = (body: Record<string, unknown>) => ({ items: body.statement as Line[], next: body.nextCursor as string | null });
    const expected = async (offset = 0, limit = 1_000_000_000): Promise<Line[]> =>
      (
        await t.db.query(
          `SELECT id, created_at, kind, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents FROM ledger_postings
            WHERE seller_id = $1 AND (available_delta_cents <> 0 OR blocked_delta_cents <> 0) ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $3`,
          [seller.id, offset, limit],
        )
      ).map((row: Record<string, string | Date>) => ({
        id: Number(row.id),
        createdAt: (row.created_at as Date).toISOString(),
        kind: row.kind,
        available: Number(row.available_delta_cents),
        blocked: Number(row.blocked_delta_cents),
        availableAfter: Number(row.available_after_cents),
        blockedAfter: Number(row.blocked_after_cents),
      }));

    it('walks every movement of the seller newest first, each once, none skipped, and a deep page has the lines SQL has at that depth', async () => {
      const { pages } = await walk(path, read);
      const served = pages.flat();
      const rows = await expected();
      expect(rows.length).toBe(SIZES.postings - Math.floor(SIZES.postings / 10)); // payouts sent move nothing
      expect(new Set(served.map((line) => line.id)).size).toBe(served.length);
      expect(served.map((line) => line.id)).toEqual(rows.map((row) => row.id));
      expect(pages.slice(0, -1).every((page) => page.length === LIMIT)).toBe(true);
      const deep = Math.floor(pages.length * 0.75);
      expect(deep).toBeGreaterThan(1);
      const pick = (line: Line) => ({ id: line.id, createdAt: line.createdAt, kind: line.kind, available: line.available, blocked: line.blocked, availableAfter: line.availableAfter, blockedAfter: line.blockedAfter });
      expect(pages[deep].map(pick)).toEqual(await expected(deep * LIMIT, LIMIT));
      // The last line of the walk is the oldest posting: its balance after is its own move.
      expect(served[served.length - 1]).toMatchObject({ availableAfter: served[served.length - 1].available, blockedAfter: served[served.length - 1].blocked });
    });

    it('runs one statement for a page, first or deep: a range of ledger_postings_statement_idx on the seller (and the cursor), in index order, reading about a page', async () => {
      const first = await statementsOf(path(null), 'ledger_postings');
      expect(first).toHaveLength(1);
      expect(await planProblems(first[0], 'ledger_postings', { maxRowsRead: 2 * (LIMIT + 1) })).toEqual([]);
      const { cursors } = await walk((cursor) => `/api/public/balance/statement?limit=${LIMIT}${cursor ? `&cursor=${cursor}` : ''}`, read);
      const deep = await statementsOf(path(cursors[cursors.length - 2]), 'ledger_postings');
      expect(deep).toHaveLength(1);
      expect(await planProblems(deep[0], 'ledger_postings', { maxRowsRead: 2 * (LIMIT + 1), cursorCond: /ROW\(created_at, id\) </ })).toEqual([]);
    });
  });

  describe('GET /api/subscriptions', () => {
    const LIMIT = 100;
    const path = (cursor: string | null) => `/api/subscriptions?limit=${LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
    type Item = { id: number; status: string; createdAt: string };
    type Body = { data: { subscriptions: Item[]; pagination: { page: number; limit: number; total: number; totalPages: number }; nextCursor: string | null } };
    const paginations: Array<Body['data']['pagination']> = [];
    const read = (body: Record<string, unknown>) => {
      const data = (body as Body).data;
      paginations.push(data.pagination);
      return { items: data.subscriptions, next: data.nextCursor };
    };

    it('walks every subscription of the seller newest first by cursor, each once, none skipped, numbered pages with the first page’s total, a deep page as SQL has it', async () => {
      const { pages } = await walk(path, read);
      const served = pages.flat();
      const rows: Array<{ id: number; status: string; created_at: Date }> = await t.db.query(
        'SELECT id, status, created_at FROM subscriptions WHERE seller_id = $1 ORDER BY id DESC',
        [seller.id],
      );
      expect(rows).toHaveLength(SIZES.subscriptions);
      expect(new Set(served.map((item) => item.id)).size).toBe(served.length);
      expect(served.map((item) => item.id)).toEqual(rows.map((row) => row.id));
      const totalPages = Math.ceil(SIZES.subscriptions / LIMIT);
      expect(paginations).toEqual(pages.map((_page, index) => ({ page: index + 1, limit: LIMIT, total: SIZES.subscriptions, totalPages })));
      const deep = Math.floor(pages.length * 0.75);
      expect(pages[deep].map((item) => ({ id: item.id, status: item.status, createdAt: item.createdAt }))).toEqual(
        rows.slice(deep * LIMIT, (deep + 1) * LIMIT).map((row) => ({ id: row.id, status: row.status, createdAt: row.created_at.toISOString() })),
      );
      // The spec's page number reaches the same rows as the cursor (shallow pages).
      const { body } = await t.http.get(`/api/subscriptions?limit=${LIMIT}&page=3`).set(seller.headers).expect(200);
      expect(body.data.subscriptions.map((item: Item) => item.id)).toEqual(pages[2].map((item) => item.id));
    });

    it('a cursor page runs one statement, a range of subscriptions_seller_idx below the cursor reading a page; the first page adds its total, an index-only range of the seller’s few count rows', async () => {
      const first = await statementsOf(path(null), 'subscriptions');
      expect(first).toHaveLength(1);
      expect(first[0].sql).not.toMatch(/COUNT/i);
      expect(await planProblems(first[0], 'subscriptions', { maxRowsRead: LIMIT + 1 })).toEqual([]);
      // The total: the seller's rows of subscription_counts (one per status once compacted), not its subscriptions.
      await t.app.get(SubscriptionsScheduler).compactCounts();
      await t.db.query('VACUUM ANALYZE subscription_counts'); // what autovacuum does to a table that churns
      const counts = await statementsOf(path(null), 'subscription_counts');
      expect(counts).toHaveLength(1);
      expect(await planProblems(counts[0], 'subscription_counts', { indexOnly: true, maxRowsRead: 7 })).toEqual([]);
      const { body } = await t.http.get(path(null)).set(seller.headers).expect(200);
      let cursor = body.data.nextCursor as string;
      for (let i = 0; i < Math.floor(SIZES.subscriptions / LIMIT) - 2; i += 1) {
        cursor = (await t.http.get(path(cursor)).set(seller.headers).expect(200)).body.data.nextCursor;
      }
      const deep = await statementsOf(path(cursor), 'subscriptions');
      expect(deep).toHaveLength(1);
      expect(deep[0].sql).not.toMatch(/COUNT/i);
      expect(await planProblems(deep[0], 'subscriptions', { maxRowsRead: LIMIT + 1, cursorCond: /\(id < / })).toEqual([]);
    });

    it('refuses a cursor with a page, and a cursor that is not one of ours', async () => {
      const { body } = await t.http.get(path(null)).set(seller.headers).expect(200);
      await t.http.get(`${path(body.data.nextCursor)}&page=2`).set(seller.headers).expect(400);
      await t.http.get(path('bm90LWEtY3Vyc29y')).set(seller.headers).expect(400);
    });
  });

  describe('GET /api/events', () => {
    const LIMIT = 100;
    const path = (cursor: string | null) => `/api/events?limit=${LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
    type Event = { id: string; type: string; objectType: string; objectId: number; deliveryStatus: string };
    const read = (body: Record<string, unknown>) => {
      const data = (body as { data: { events: Event[]; nextCursor: string | null } }).data;
      return { items: data.events, next: data.nextCursor };
    };

    it('walks every event of the seller newest first by cursor, each once, none skipped, and a deep page as SQL has it', async () => {
      const { pages } = await walk(path, read);
      const served = pages.flat();
      const rows: Array<{ event_id: string; event_type: string; object_type: string; object_id: string; status: string }> = await t.db.query(
        'SELECT event_id, event_type, object_type, object_id, status FROM outbox_events WHERE seller_id = $1 ORDER BY id DESC',
        [seller.id],
      );
      expect(rows).toHaveLength(SIZES.events);
      expect(new Set(served.map((event) => event.id)).size).toBe(served.length);
      expect(served.map((event) => event.id)).toEqual(rows.map((row) => row.event_id));
      const deep = Math.floor(pages.length * 0.75);
      expect(pages[deep].map((e) => ({ id: e.id, type: e.type, objectType: e.objectType, objectId: e.objectId, deliveryStatus: e.deliveryStatus }))).toEqual(
        rows.slice(deep * LIMIT, (deep + 1) * LIMIT).map((row) => ({
          id: row.event_id,
          type: row.event_type,
          objectType: row.object_type,
          objectId: Number(row.object_id),
          deliveryStatus: row.status.toLowerCase(),
        })),
      );
    });

    it('runs one statement for a page, first or deep: a range of outbox_events_seller_idx on the seller (and the cursor), in index order, reading a page', async () => {
      const first = await statementsOf(path(null), 'outbox_events');
      expect(first).toHaveLength(1);
      expect(await planProblems(first[0], 'outbox_events', { maxRowsRead: LIMIT + 1 })).toEqual([]);
      const { cursors } = await walk(path, read);
      const deep = await statementsOf(path(cursors[cursors.length - 2]), 'outbox_events');
      expect(deep).toHaveLength(1);
      expect(await planProblems(deep[0], 'outbox_events', { maxRowsRead: LIMIT + 1, cursorCond: /\(id < / })).toEqual([]);
    });
  });
});
