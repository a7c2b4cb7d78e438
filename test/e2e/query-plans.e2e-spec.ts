import { QueryRunner } from 'typeorm';
import { DUE_FOR_BILLING } from '../../src/subscriptions/subscriptions.repository';
import { createSeller } from './setup/factories';
import { seedSubscriptions } from './setup/large-data';
import { startApp, TestApp } from './setup/test-app';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every scan of a table in the plan: how the table is reached, by which index, and with which index condition. */
function scans(node: PlanNode, found: PlanNode[] = []): PlanNode[] {
  if (node['Relation Name'] || node['Node Type'] === 'Bitmap Index Scan') found.push(node);
  for (const child of node.Plans ?? []) scans(child, found);
  return found;
}

/**
 * The queries of the hot paths and of the scheduled jobs, planned with sequential scans priced out
 * (enable_seqscan = off): each table must then be reached through an index whose condition comes from
 * the query (an Index Cond), never by a Seq Scan nor by walking a whole index with a filter. A query
 * that no index serves fails here however small the test tables are.
 */
describe('Every hot query is served by an index (EXPLAIN)', () => {
  let t: TestApp;
  let runner: QueryRunner;
  let partialIndexes: Set<string>;

  beforeAll(async () => {
    t = await startApp();
    runner = t.db.createQueryRunner();
    await runner.startTransaction();
    await runner.query('SET LOCAL enable_seqscan = off');
    // The outbox as it is after a while (mostly delivered events, a few pending), so that the planner
    // knows which of its indexes is selective; rolled back with everything else at the end.
    const seller = await createSeller(t);
    await runner.query(
      `INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, status, delivered_at)
       SELECT gen_random_uuid(), $1, 'SALE_POSTBACK', 'sale:' || (n % 5000), 'https://example.com/p', true, '{}', 'transaction.status_changed',
              CASE WHEN n % 1000 = 0 THEN 'PENDING' ELSE 'DELIVERED' END, CASE WHEN n % 1000 = 0 THEN NULL ELSE now() END
         FROM generate_series(1, 20000) AS n`,
      [seller.id],
    );
    // Likewise subscriptions of many sellers, so that their plans do not depend on what earlier test
    // files left in the table and its statistics (large-data-reads analyzes it with one seller's seed).
    const others = [seller.id, ...(await Promise.all(Array.from({ length: 9 }, () => createSeller(t)))).map((other) => other.id)];
    for (const sellerId of others) await seedSubscriptions((sql, parameters) => runner.query(sql, parameters), sellerId, 500);
    await runner.query('ANALYZE outbox_events');
    await runner.query('ANALYZE subscriptions');
    const partial: Array<{ indexname: string }> = await runner.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE '% WHERE %'`);
    partialIndexes = new Set(partial.map((row) => row.indexname));
  });
  afterAll(async () => {
    await runner.rollbackTransaction();
    await runner.release();
    await t.close();
  });

  const now = new Date('2026-01-01T00:00:00Z');
  const cases: Array<[string, string, unknown[]]> = [
    [
      'the key pair of a request (ApiKeyGuard)',
      `SELECT k.seller_id, k.private_key_hash, s.blocked FROM api_keys k JOIN sellers s ON s.id = k.seller_id
        WHERE k.public_key = $1 AND k.revoked_at IS NULL`,
      ['pk_0123456789abcdef0123'],
    ],
    ['the balance of a seller', `SELECT available_cents, blocked_cents, updated_at FROM balances WHERE seller_id = $1`, [1]],
    ['a sale by id', `SELECT * FROM sales WHERE id = $1`, [1]],
    ['the items of a sale', `SELECT * FROM sale_items WHERE sale_id = $1 ORDER BY position`, [1]],
    ['a withdrawal by id', `SELECT * FROM withdrawals WHERE id = $1`, [1]],
    ['the seller account', `SELECT * FROM sellers WHERE id = $1`, [1]],
    [
      'the revenue of a seller',
      `SELECT COALESCE(SUM(amount_cents) FILTER (WHERE status = 'PAGO'), 0), COUNT(*) FILTER (WHERE status = 'PAGO') FROM sales WHERE seller_id = $1`,
      [1],
    ],
    [
      'an idempotency key',
      `SELECT request_hash, resource_id, response_status, response_body, created_at FROM idempotency_keys WHERE seller_id = $1 AND scope = $2 AND key = $3`,
      [1, 'POST /api/sales', 'k-1'],
    ],
    ['expired idempotency keys (hourly purge)', `SELECT id FROM idempotency_keys WHERE created_at < $1 LIMIT 500`, [now]],
    [
      'PIX and boleto sales due to expire',
      `SELECT id FROM sales WHERE status = 'PENDENTE' AND expires_at IS NOT NULL AND expires_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
          AND (payment_method <> 'BOLETO' OR provider = 'sandbox')
        ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, null, 500],
    ],
    [
      "a real issuer's open boletos to ask about (the boleto poll, issue 40)",
      `SELECT s.id FROM sales s
        WHERE s.payment_method = 'BOLETO' AND s.provider <> 'sandbox' AND s.status = 'PENDENTE' AND s.provider = ANY($3::varchar[])
          AND ($1::int IS NULL OR s.seller_id = $1) AND s.external_transaction_id IS NOT NULL
          AND ((s.provider_checked_at IS NULL OR s.provider_checked_at < now() - make_interval(secs => $4)) OR (s.expires_at <= $5 AND s.provider_checked_at < now() - interval '1 minute'))
        ORDER BY s.provider, s.provider_checked_at NULLS FIRST LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [null, 100, ['cielo'], 3600, now],
    ],
    [
      "a real issuer's boletos cancelled within the late watch (the boleto poll, issue 40)",
      `SELECT s.id FROM sales s
        WHERE s.payment_method = 'BOLETO' AND s.provider <> 'sandbox' AND s.status = 'CANCELADO' AND s.provider = ANY($3::varchar[])
          AND s.expires_at > $6::timestamptz - make_interval(days => $5)
          AND ($1::int IS NULL OR s.seller_id = $1) AND s.external_transaction_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM late_boleto_payments l WHERE l.sale_id = s.id) AND (s.provider_checked_at IS NULL OR s.provider_checked_at < now() - make_interval(secs => $4))
        ORDER BY s.provider, s.expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [null, 100, ['cielo'], 3600, 30, now],
    ],
    [
      'card reserves due for release',
      `SELECT id FROM sales WHERE status = 'PAGO' AND reserve_settled_at IS NULL AND reserve_release_due_at IS NOT NULL
          AND reserve_release_due_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
        ORDER BY reserve_release_due_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, null, 500],
    ],
    [
      'card sales left EM_PROCESSAMENTO (recovery)',
      `SELECT id FROM sales WHERE status = 'EM_PROCESSAMENTO' AND updated_at <= now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
      [120, 500],
    ],
    [
      'postbacks due (the outbox relay)',
      `SELECT e.id FROM outbox_events e
        WHERE e.status = 'PENDING' AND e.next_attempt_at <= now()
          AND NOT EXISTS (SELECT 1 FROM outbox_events p WHERE p.aggregate_key = e.aggregate_key AND p.status = 'PENDING' AND p.id < e.id)
        ORDER BY e.id LIMIT $1`,
      [100],
    ],
    ['the ledger entries of a withdrawal', `SELECT * FROM ledger_entries WHERE reference_type = $1 AND reference_id = $2`, ['WITHDRAWAL', '1']],
    [
      'withdrawals without news from their payout provider (recovery)',
      `SELECT id FROM withdrawals
        WHERE status IN ('PENDING', 'PROCESSING') AND updated_at <= now() - make_interval(secs => $1)
          AND (payout_check_at IS NULL OR payout_check_at <= now())
        ORDER BY updated_at LIMIT $2`,
      [120, 500],
    ],
    ['the subscriptions of a seller', `SELECT id, status FROM subscriptions WHERE seller_id = $1 ORDER BY id`, [1]],
    ['subscriptions with billing work due (the billing claim)', DUE_FOR_BILLING, [now, null, now, now, 500, [], now]],
    [
      'a page of the events API, newest first after a cursor',
      `SELECT * FROM outbox_events e WHERE e.seller_id = $1 AND e.id < $2 ORDER BY e.id DESC LIMIT 21`,
      [1, '100000'],
    ],
    [
      'a page of the events API of one type',
      `SELECT * FROM outbox_events e WHERE e.seller_id = $1 AND e.event_type = $2 ORDER BY e.id DESC LIMIT 21`,
      [1, 'subscription.status_changed'],
    ],
    [
      'the events of one sale',
      `SELECT * FROM outbox_events e WHERE e.seller_id = $1 AND e.object_type = $2 AND e.object_id = $3 ORDER BY e.id DESC LIMIT 21`,
      [1, 'sale', 42],
    ],
    [
      'a page of failed events',
      `SELECT * FROM outbox_events e WHERE e.seller_id = $1 AND e.status = $2 ORDER BY e.id DESC LIMIT 21`,
      [1, 'FAILED'],
    ],
    ['one event by its id', `SELECT * FROM outbox_events WHERE seller_id = $1 AND event_id = $2`, [1, '0b6c1f8e-5d2a-4b7e-9a51-3c2d1e0f9a8b']],
    [
      'failed events of a period (bulk replay)',
      `SELECT id FROM outbox_events WHERE seller_id = $1 AND status = 'FAILED' AND created_at >= $2 AND created_at < $3 ORDER BY id LIMIT 1000`,
      [1, now, now],
    ],
    ['the next sequence of an object', `SELECT last FROM event_sequences WHERE object_type = $1 AND object_id = $2`, ['sale', 42]],
    ['the postback URLs of a seller', `SELECT url, failing_since FROM postback_endpoints WHERE seller_id = $1 ORDER BY failing_since IS NULL, url`, [1]],
    [
      'the charges of a subscription period',
      `SELECT id FROM sales WHERE subscription_id = $1 AND billing_period = $2 AND billing_attempt = $3`,
      [1, 1, 0],
    ],
  ];

  it.each(cases)('%s', async (_name, sql, parameters) => {
    const [{ 'QUERY PLAN': plan }]: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> = await runner.query(`EXPLAIN (FORMAT JSON) ${sql}`, parameters);
    const found = scans(plan[0].Plan);
    if (process.env.SHOW_PLANS) console.log(JSON.stringify(plan[0].Plan, null, 1));
    expect(found.length).toBeGreaterThan(0);
    // Reading a whole partial index is reading exactly the rows its predicate selects (say, the pending events).
    const served = (node: PlanNode) =>
      Boolean(node['Index Cond']) || node['Node Type'] === 'Bitmap Heap Scan' || partialIndexes.has(node['Index Name'] ?? '');
    const unindexed = found.filter((node) => !served(node));
    expect(unindexed.map((node) => `${node['Node Type']} on ${node['Relation Name'] ?? node['Index Name']}`)).toEqual([]);
  });
});
