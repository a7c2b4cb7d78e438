import { MigrationInterface, QueryRunner } from 'typeorm';

const ACCOUNTS = `'AVAILABLE', 'BLOCKED', 'FEE_REVENUE', 'FINE_REVENUE', 'REVERSAL_COST', 'ACQUIRER_RECEIVABLE', 'PSP_HOLDINGS', 'PAYOUT_IN_TRANSIT'`;
const PROVIDER_ACCOUNTS = `'ACQUIRER_RECEIVABLE', 'PSP_HOLDINGS', 'PAYOUT_IN_TRANSIT'`;
/** Where a sale's money sits until settled (domain/sale-ledger.ts receivableOf). */
const RECEIVABLE = `CASE WHEN s.payment_method IN ('CREDIT_CARD', 'DEBIT_CARD') THEN 'ACQUIRER_RECEIVABLE' ELSE 'PSP_HOLDINGS' END`;

/**
 * The ledger becomes double entry (issue 20): every event that moves money is one row of
 * ledger_postings (its seller, cause, the seller's available and blocked moves and what they are
 * after it: the seller's statement), and its entries in ledger_entries, on the seller's accounts and on
 * the platform's (fee and fine revenue, the cost of reversals) and the providers' (what the acquirer
 * owes, what the PSP holds, payouts in transit), sum to zero. A statement-level trigger refuses any
 * insert whose postings do not balance; both tables are append-only.
 *
 * Existing single-entry rows are grouped into postings (same seller, kind, cause and transaction), and
 * each gets the entries it lacked, from its sale's or withdrawal's own amounts; the migration fails
 * rather than leave a posting that does not balance. Every provider so far was the sandbox.
 */
export class MakeLedgerDoubleEntry1795470000000 implements MigrationInterface {
  name = 'MakeLedgerDoubleEntry1795470000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE ledger_postings (
        id                     bigserial PRIMARY KEY,
        seller_id              integer NOT NULL CONSTRAINT ledger_postings_seller_fk REFERENCES sellers (id),
        kind                   varchar(30) NOT NULL,
        reference_type         varchar(12) NOT NULL,
        reference_id           bigint NOT NULL,
        available_delta_cents  bigint NOT NULL,
        blocked_delta_cents    bigint NOT NULL,
        available_after_cents  bigint NOT NULL,
        blocked_after_cents    bigint NOT NULL,
        created_at             timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ledger_postings_reference_type_check CHECK (reference_type IN ('SALE', 'WITHDRAWAL'))
      )`);
    // The seller's statement: newest first, by date range, with a (created_at, id) cursor.
    await queryRunner.query(`CREATE INDEX ledger_postings_statement_idx ON ledger_postings (seller_id, created_at DESC, id DESC)`);
    await queryRunner.query(`CREATE INDEX ledger_postings_created_idx ON ledger_postings (created_at)`);

    await queryRunner.query(`ALTER TABLE ledger_entries ADD COLUMN posting_id bigint, ADD COLUMN provider varchar(20)`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_check`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check CHECK (account IN (${ACCOUNTS}))`);
    await queryRunner.query(
      `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_provider_check CHECK ((provider IS NOT NULL) = (account IN (${PROVIDER_ACCOUNTS})))`,
    );
    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN account TYPE varchar(24)`);

    // ---- the single-entry rows, grouped into postings, with their running balances ----
    await queryRunner.query(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`
      CREATE TEMPORARY TABLE legacy_postings AS
      SELECT row_number() OVER (ORDER BY min(id)) AS id, seller_id, kind, reference_type, reference_id, created_at, min(id) AS first_entry,
             COALESCE(sum(amount_cents) FILTER (WHERE account = 'AVAILABLE'), 0) AS available_delta,
             COALESCE(sum(amount_cents) FILTER (WHERE account = 'BLOCKED'), 0) AS blocked_delta
        FROM ledger_entries GROUP BY seller_id, kind, reference_type, reference_id, created_at`);
    await queryRunner.query(`
      INSERT INTO ledger_postings (id, seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents,
                                   available_after_cents, blocked_after_cents, created_at)
      SELECT id, seller_id, kind, reference_type, reference_id, available_delta, blocked_delta,
             sum(available_delta) OVER w, sum(blocked_delta) OVER w, created_at
        FROM legacy_postings WINDOW w AS (PARTITION BY seller_id ORDER BY first_entry)`);
    // Legacy postings take ids 1..n in the order of their first entry: a seller's postings are in id order.
    await queryRunner.query(`SELECT setval('ledger_postings_id_seq', max(id)) FROM ledger_postings HAVING count(*) > 0`);
    await queryRunner.query(`
      UPDATE ledger_entries e SET posting_id = p.id FROM legacy_postings p
       WHERE e.seller_id = p.seller_id AND e.kind = p.kind AND e.reference_type = p.reference_type
         AND e.reference_id = p.reference_id AND e.created_at = p.created_at`);
    // The other side of each legacy posting, from its cause's own amounts.
    await queryRunner.query(`
      INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id, created_at)
      SELECT p.id, p.seller_id, m.account, CASE WHEN m.account IN (${PROVIDER_ACCOUNTS}) THEN 'sandbox' END, m.amount, p.kind, p.reference_type, p.reference_id, p.created_at
        FROM legacy_postings p
        JOIN sales s ON p.reference_type = 'SALE' AND s.id = p.reference_id
        CROSS JOIN LATERAL (VALUES
          ('FEE_REVENUE', CASE WHEN p.kind = 'SALE_PAID' THEN s.system_fee_cents END),
          (${RECEIVABLE}, CASE WHEN p.kind = 'SALE_PAID' THEN -s.amount_cents
                               WHEN p.kind IN ('REFUND', 'CHARGEBACK_CONFIRMED', 'MED_LOST') THEN s.amount_cents END),
          ('REVERSAL_COST', CASE WHEN p.kind IN ('REFUND', 'CHARGEBACK_CONFIRMED', 'MED_LOST') THEN -s.system_fee_cents END),
          ('FINE_REVENUE', CASE WHEN p.kind = 'CHARGEBACK_OPENED' THEN -(p.available_delta + p.blocked_delta) END)
        ) AS m(account, amount)
       WHERE m.amount IS NOT NULL AND m.amount <> 0`);
    await queryRunner.query(`
      INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id, created_at)
      SELECT p.id, p.seller_id, m.account, CASE WHEN m.account = 'PSP_HOLDINGS' THEN 'sandbox' END, m.amount, p.kind, p.reference_type, p.reference_id, p.created_at
        FROM legacy_postings p
        JOIN withdrawals w ON p.reference_type = 'WITHDRAWAL' AND w.id = p.reference_id AND p.kind = 'WITHDRAWAL_COMPLETED'
        CROSS JOIN LATERAL (VALUES ('FEE_REVENUE', w.fee_total_cents), ('PSP_HOLDINGS', w.net_amount_cents)) AS m(account, amount)
       WHERE m.amount <> 0`);
    // Withdrawals already with the payout provider: their payout in transit, as PROCESSING now posts it.
    await queryRunner.query(`
      WITH sent AS (
        INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents)
        SELECT w.seller_id, 'WITHDRAWAL_SENT', 'WITHDRAWAL', w.id, 0, 0, b.available_cents, b.blocked_cents
          FROM withdrawals w JOIN balances b ON b.seller_id = w.seller_id WHERE w.status = 'PROCESSING'
        RETURNING id, seller_id, reference_id)
      INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id)
      SELECT sent.id, sent.seller_id, m.account, 'sandbox', m.amount, 'WITHDRAWAL_SENT', 'WITHDRAWAL', sent.reference_id
        FROM sent JOIN withdrawals w ON w.id = sent.reference_id
        CROSS JOIN LATERAL (VALUES ('PSP_HOLDINGS', w.net_amount_cents), ('PAYOUT_IN_TRANSIT', -w.net_amount_cents)) AS m(account, amount)
       WHERE m.amount <> 0`);
    const [unbalanced]: Array<{ count: string }> = await queryRunner.query(
      `SELECT count(*) AS count FROM (SELECT posting_id FROM ledger_entries GROUP BY posting_id HAVING posting_id IS NULL OR sum(amount_cents) <> 0) AS bad`,
    );
    if (Number(unbalanced.count) > 0) {
      throw new Error(`MakeLedgerDoubleEntry: ${unbalanced.count} legacy postings do not balance; the ledger is left as it was`);
    }
    await queryRunner.query(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`DROP TABLE legacy_postings`);

    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN posting_id SET NOT NULL`);
    await queryRunner.query(`CREATE INDEX ledger_entries_posting_idx ON ledger_entries (posting_id)`);
    await queryRunner.query(`CREATE INDEX ledger_entries_account_created_idx ON ledger_entries (account, created_at)`);
    await queryRunner.query(`
      CREATE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        unbalanced bigint;
      BEGIN
        SELECT posting_id INTO unbalanced FROM inserted GROUP BY posting_id HAVING sum(amount_cents) <> 0 LIMIT 1;
        IF unbalanced IS NOT NULL THEN
          RAISE EXCEPTION 'ledger posting % does not balance: its entries must sum to zero', unbalanced;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_balanced()`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE OR DELETE ON ledger_postings
      FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER ledger_entries_balanced ON ledger_entries`);
    await queryRunner.query(`DROP FUNCTION ledger_entries_balanced()`);
    await queryRunner.query(`ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`DELETE FROM ledger_entries WHERE account NOT IN ('AVAILABLE', 'BLOCKED')`);
    await queryRunner.query(`ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only`);
    await queryRunner.query(`DROP INDEX ledger_entries_account_created_idx`);
    await queryRunner.query(`DROP INDEX ledger_entries_posting_idx`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_provider_check`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_check`);
    await queryRunner.query(`ALTER TABLE ledger_entries ALTER COLUMN account TYPE varchar(10)`);
    await queryRunner.query(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check CHECK (account IN ('AVAILABLE', 'BLOCKED'))`);
    await queryRunner.query(`ALTER TABLE ledger_entries DROP COLUMN provider, DROP COLUMN posting_id`);
    await queryRunner.query(`DROP TABLE ledger_postings`);
  }
}
