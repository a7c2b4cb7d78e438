/**
 * One seller's long history written straight into the tables by generate_series: the setup of the
 * large-data reads (test/e2e/large-data-reads.e2e-spec.ts with a CI-sized seed, bench/large-data.js with
 * a million rows), not what they test. The ledger part is what ledger:verify accepts: each posting's
 * entries sum to zero and match its seller moves, its balance-after follows the previous one, and the
 * seller's balances row ends at the last posting's figures.
 */
export type Query = (sql: string, parameters?: unknown[]) => Promise<unknown>;

export interface LargeDataSizes {
  postings: number;
  events: number;
  subscriptions: number;
}

/**
 * `postings` postings of the seller, oldest first, three to a second (a page boundary falls between
 * postings of one instant, as the (created_at, id) cursor must handle): nine in ten a card sale paid
 * (available +100..196, blocked +0..4, the fee, what the acquirer owes), one in ten a payout sent, which
 * moves no balance of the seller and is not in its statement. `query` runs inside the caller's transaction.
 */
export async function seedLedger(query: Query, sellerId: number, postings: number): Promise<void> {
  await query(
    `WITH g AS (
       SELECT n, nextval('ledger_postings_id_seq') AS id, now() - interval '1 hour' - ($2 - n) / 3 * interval '1 second' AS at,
              n % 10 = 0 AS payout,
              CASE WHEN n % 10 = 0 THEN 0 ELSE 100 + n % 97 END AS available_delta,
              CASE WHEN n % 10 = 0 THEN 0 ELSE n % 5 END AS blocked_delta
         FROM generate_series(1, $2::int) AS n),
     posted AS (
       INSERT INTO ledger_postings (id, seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents,
                                    available_after_cents, blocked_after_cents, created_at)
       SELECT id, $1, CASE WHEN payout THEN 'WITHDRAWAL_SENT' ELSE 'SALE_PAID' END, CASE WHEN payout THEN 'WITHDRAWAL' ELSE 'SALE' END, n,
              available_delta, blocked_delta, sum(available_delta) OVER w, sum(blocked_delta) OVER w, at
         FROM g WINDOW w AS (ORDER BY n))
     INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id, created_at)
     SELECT g.id, $1, e.account, e.provider, e.amount, CASE WHEN payout THEN 'WITHDRAWAL_SENT' ELSE 'SALE_PAID' END,
            CASE WHEN payout THEN 'WITHDRAWAL' ELSE 'SALE' END, g.n, g.at
       FROM g CROSS JOIN LATERAL (VALUES
         ('AVAILABLE', NULL, available_delta),
         ('BLOCKED', NULL, blocked_delta),
         ('FEE_REVENUE', NULL, CASE WHEN payout THEN 0 ELSE 10 END),
         ('ACQUIRER_RECEIVABLE', 'sandbox', CASE WHEN payout THEN 0 ELSE -(available_delta + blocked_delta + 10) END),
         ('PSP_HOLDINGS', 'sandbox', CASE WHEN payout THEN 5000 ELSE 0 END),
         ('PAYOUT_IN_TRANSIT', 'sandbox', CASE WHEN payout THEN -5000 ELSE 0 END)
       ) AS e(account, provider, amount)
      WHERE e.amount <> 0`,
    [sellerId, postings],
  );
  await query(
    `UPDATE balances b SET available_cents = last.available_after_cents, blocked_cents = last.blocked_after_cents, updated_at = now()
       FROM (SELECT available_after_cents, blocked_after_cents FROM ledger_postings WHERE seller_id = $1 ORDER BY id DESC LIMIT 1) AS last
      WHERE b.seller_id = $1`,
    [sellerId],
  );
}

/**
 * `events` events of the seller, ten a second, oldest first, delivered (one in fifty failed after its
 * retries): postbacks of sales and subscriptions and withdrawal webhooks in turn. None is pending, so
 * that no relay sends them.
 */
export async function seedEvents(query: Query, sellerId: number, events: number): Promise<void> {
  await query(
    `INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, object_type, object_id, sequence,
                                status, attempts, last_error, created_at, next_attempt_at, retry_base_at, delivered_at)
     SELECT gen_random_uuid(), $1, (ARRAY['SALE_POSTBACK', 'SUBSCRIPTION_POSTBACK', 'WITHDRAWAL_WEBHOOK'])[1 + n % 3], k.object_type || ':' || (n / 3 + 1),
            'https://loja.example.com/postbacks', n % 3 <> 2,
            jsonb_build_object('id', n / 3 + 1, 'status', 'PAGO', 'previousStatus', 'PENDENTE', 'amount', 1000 + n % 900,
                               'customer', jsonb_build_object('name', 'Cliente ' || n, 'email', 'cliente-' || n || '@example.com')),
            (ARRAY['transaction.status_changed', 'subscription.status_changed', 'withdrawal.status_changed'])[1 + n % 3], k.object_type, n / 3 + 1, 1,
            CASE WHEN n % 50 = 0 THEN 'FAILED' ELSE 'DELIVERED' END, CASE WHEN n % 50 = 0 THEN 10 ELSE 1 END,
            CASE WHEN n % 50 = 0 THEN 'HTTP 500' END, k.at, k.at, k.at, CASE WHEN n % 50 = 0 THEN NULL ELSE k.at + interval '1 second' END
       FROM generate_series(1, $2::int) AS n
       CROSS JOIN LATERAL (SELECT (ARRAY['sale', 'subscription', 'withdrawal'])[1 + n % 3] AS object_type,
                                  now() - interval '1 hour' - ($2 - n) / 10 * interval '1 second' AS at) AS k
      ORDER BY n`,
    [sellerId, events],
  );
}

/** `subscriptions` card subscriptions of the seller, one a minute, oldest first: active (due in a month), paused or cancelled. */
export async function seedSubscriptions(query: Query, sellerId: number, subscriptions: number): Promise<void> {
  await query(
    `INSERT INTO subscriptions (provider, seller_id, status, billing_cycle, amount_cents, payment_method, card_token, card_last_four, card_brand,
                                customer_name, customer_email, product_id, product_name, next_billing_date, started_at, current_period,
                                total_billings, successful_billings, last_payment_status, paused_at, cancelled_at, created_at, updated_at)
     SELECT 'sandbox', $1, s.status, 'MONTHLY', 2990 + n % 100, 'CREDIT_CARD', 'tok_large_' || n, '1111', 'VISA',
            'Cliente ' || n, 'cliente-' || n || '@example.com', 1, 'Plano Mensal',
            CASE WHEN s.status = 'ACTIVE' THEN now() + interval '30 days' END, s.at, 1, 1, 1, 'PAGO',
            CASE WHEN s.status = 'PAUSED' THEN now() END, CASE WHEN s.status = 'CANCELLED' THEN now() END, s.at, s.at
       FROM generate_series(1, $2::int) AS n
       CROSS JOIN LATERAL (SELECT (ARRAY['ACTIVE', 'PAUSED', 'CANCELLED'])[1 + n % 3] AS status,
                                  now() - interval '1 hour' - ($2 - n) * interval '1 minute' AS at) AS s
      ORDER BY n`,
    [sellerId, subscriptions],
  );
}
