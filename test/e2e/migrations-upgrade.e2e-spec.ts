import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { describeDatabaseUrl } from '../../src/database/database-url';
import { checkProviderBacking } from '../../src/ledger/provider-backing';
import { recurrenceContract, recurringChargeTxid } from '../../src/providers/automatic-pix.port';
import { pixTxid } from '../../src/providers/pix-provider.port';

/** The last migration the code before issue 37's provider change ran; the data below is what that code wrote. */
const BEFORE = 'RecordPspReturnsAndSandboxPayments1795580000000';
const BEFORE_INDEX = MIGRATIONS.findIndex((m) => m.name === BEFORE);
/** Every migration after it, in order: the upgrade (issue 37's three among them). */
const UPGRADES = MIGRATIONS.slice(BEFORE_INDEX + 1).map((m) => m.name);

const SELLER = 1;
/** Subscriptions: Pix Automático at the PSP, Pix Automático held by the sandbox, card, plain PIX (a CNPJ customer), card with no opening sale. */
const SUB = { psp: 11, sandbox: 12, card: 13, pix: 14, noOpening: 15 } as const;
/** Sales: standalone card, PIX at the PSP, PIX at the sandbox (refunded), boleto; then the subscriptions' charges. */
const SALE = { card: 101, pixPsp: 102, pixSandbox: 103, boleto: 104, pspOpening: 111, pspRenewal: 112, sandboxRenewal: 121, cardOpening: 131, pixOpening: 141 } as const;
const PSP_RECURRENCE = 'RR1234567820260101a1b2c3d4e5f'; // the PSP's idRec: RR, ISPB, date, 11 characters
const SANDBOX_RECURRENCE = 'RR0000000020260101f9e8d7c6b5a';
const CPF = '52998224725';
const CNPJ = '11222333000181';
const e2e = (n: number) => `E12345678202601011200${String(n).padStart(11, '0')}`;

type Row = Record<string, unknown>;

/**
 * Issue 37's migrations upgrade the data the code before them wrote (21b6048 and earlier): a scratch
 * database migrated up to RecordPspReturnsAndSandboxPayments, filled by SQL as that code filled it (sales of
 * every kind with `pix_provider` set only on plain PIX charges, Pix Automático charges booked under the
 * card provider 'sandbox' although the PSP held them, refunds naming the PIX rail's provider of the day,
 * the API Pix inboxes), then migrated to the end: each record names the provider that holds it, the ledger
 * still balances and now matches its providers (ledger:verify's provider check passes), the inboxes are
 * one, subscriptions keep their customer's document type. Then undone down to where it started, and
 * upgraded again. It starts no app: run alone, set E2E_LOG_LEVEL, or the teardown finds no log line to scan.
 */
describe('Migrations upgrade existing data (issue 37)', () => {
  const { maintenanceUrl } = describeDatabaseUrl(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/payment_gateway');
  const databaseName = `payment_gateway_migrations_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const url = new URL(maintenanceUrl);
  url.pathname = `/${databaseName}`;
  let db: DataSource;
  /** Each posting's entries as the old code wrote them: id, posting, account, amount. */
  let entriesBefore: Row[];
  let schemaBefore: Row[];

  const q = (sql: string, params?: unknown[]): Promise<Row[]> => db.query(sql, params);
  const byId = async (sql: string): Promise<Record<number, unknown>> => Object.fromEntries((await q(sql)).map((row) => [Number(row.id), row.value]));
  const tableExists = async (name: string) => ((await q(`SELECT to_regclass($1) IS NOT NULL AS found`, [name]))[0].found as boolean);
  const columnsOf = async (table: string) =>
    (await q(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY column_name`, [table])).map((row) => row.column_name);
  const executed = async () => (await q(`SELECT name FROM migrations ORDER BY timestamp`)).map((row) => row.name);
  /** The provider of each provider account a sale's postings moved: { saleId: { account: [providers] } }. */
  const saleProviderAccounts = async () => {
    const rows = await q(`
      SELECT p.reference_id AS sale, e.account, array_agg(DISTINCT e.provider ORDER BY e.provider) AS providers
        FROM ledger_entries e JOIN ledger_postings p ON p.id = e.posting_id
       WHERE p.reference_type = 'SALE' AND e.provider IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`);
    const found: Record<number, Record<string, string[]>> = {};
    for (const row of rows) (found[Number(row.sale)] ??= {})[row.account as string] = row.providers as string[];
    return found;
  };
  /** Tables, columns (type, length, nullability), constraints and indexes of the public schema. */
  const schema = () =>
    q(`
      SELECT 'column' AS what, table_name || '.' || column_name AS name, data_type || coalesce('(' || character_maximum_length || ')', '') || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS definition
        FROM information_schema.columns WHERE table_schema = 'public'
      UNION ALL
      SELECT 'constraint', conrelid::regclass || '.' || conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = 'public'::regnamespace
      UNION ALL
      SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
      ORDER BY 1, 2`);

  /** Runs the migrations of `list` not run yet on the scratch database, each in its transaction. */
  const migrate = async (list: typeof MIGRATIONS): Promise<string[]> => {
    const runner = await new DataSource({ type: 'postgres', url: url.toString(), migrations: list, migrationsTransactionMode: 'each', extra: { max: 1 } }).initialize();
    try {
      return (await runner.runMigrations()).map((m) => m.name);
    } finally {
      await runner.destroy();
    }
  };

  beforeAll(async () => {
    const maintenance = await new DataSource({ type: 'postgres', url: maintenanceUrl, extra: { max: 1 } }).initialize();
    await maintenance.query(`CREATE DATABASE "${databaseName}"`);
    await maintenance.destroy();
    expect(BEFORE_INDEX).toBeGreaterThan(0);
    expect(UPGRADES).toEqual(expect.arrayContaining(['RecordEachRecordsProvider1795590000000', 'UnifyProviderInbox1795595000000', 'KeepSubscriptionDocumentType1795620000000']));
    expect((await migrate(MIGRATIONS.slice(0, BEFORE_INDEX + 1))).at(-1)).toBe(BEFORE);
    db = await new DataSource({ type: 'postgres', url: url.toString(), extra: { max: 1 } }).initialize();
    schemaBefore = await schema();
    await writeOldData();
    entriesBefore = await q(`SELECT id, posting_id, account, amount_cents FROM ledger_entries ORDER BY id`);
  }, 120_000);

  afterAll(async () => {
    await db?.destroy();
    const maintenance = await new DataSource({ type: 'postgres', url: maintenanceUrl, extra: { max: 1 } }).initialize();
    await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await maintenance.destroy();
  });

  /** The seller's running balance, for the postings' balance-after columns and the balances row. */
  const balance = { available: 0, blocked: 0 };
  /** One posting and its entries (one INSERT, as the balance trigger checks each statement), as LedgerRepository wrote them. */
  async function post(sellerId: number | null, kind: string, referenceType: string, referenceId: number, entries: Array<[account: string, provider: string | null, cents: number]>) {
    const delta = (account: string) => entries.filter(([a]) => a === account).reduce((sum, [, , cents]) => sum + cents, 0);
    const [available, blocked] = [delta('AVAILABLE'), delta('BLOCKED')];
    if (sellerId !== null) Object.assign(balance, { available: balance.available + available, blocked: balance.blocked + blocked });
    const [posting] = await q(
      `INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [sellerId, kind, referenceType, referenceId, available, blocked, sellerId === null ? null : balance.available, sellerId === null ? null : balance.blocked],
    );
    const params: unknown[] = [posting.id, sellerId, kind, referenceType, referenceId];
    const values = entries.map(([account, provider, cents]) => `($1, $2, $3, $4, $5, $${params.push(account)}, $${params.push(provider)}, $${params.push(cents)})`);
    await q(`INSERT INTO ledger_entries (posting_id, seller_id, kind, reference_type, reference_id, account, provider, amount_cents) VALUES ${values.join(', ')}`, params);
  }

  /** A sale paid (SALE_PAID): the net credited, the fee earned, the amount at its provider account under `provider`. */
  const paid = (saleId: number, amount: number, fee: number, receivable: 'ACQUIRER_RECEIVABLE' | 'PSP_HOLDINGS', provider: string) =>
    post(SELLER, 'SALE_PAID', 'SALE', saleId, [
      ['AVAILABLE', null, amount - fee],
      ['FEE_REVENUE', null, fee],
      [receivable, provider, -amount],
    ]);

  async function insertSale(columns: Row): Promise<void> {
    const row: Row = { seller_id: SELLER, customer_name: 'Maria Pagadora', customer_email: 'maria@example.com', customer_document_type: 'cpf', customer_document_number: CPF, ...columns };
    if (row.amount_cents !== undefined && row.system_fee_cents === undefined) Object.assign(row, { system_fee_cents: 0, net_amount_cents: row.amount_cents });
    const keys = Object.keys(row);
    await q(`INSERT INTO sales (${keys.join(', ')}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
  }

  async function insertSubscription(columns: Row): Promise<void> {
    const row: Row = {
      seller_id: SELLER,
      status: 'ACTIVE',
      billing_cycle: 'MONTHLY',
      amount_cents: 3000,
      customer_name: 'Maria Pagadora',
      customer_email: 'maria@example.com',
      customer_document: CPF,
      product_id: 1,
      product_name: 'Plano',
      started_at: '2026-01-01T12:00:00Z',
      next_billing_date: '2026-03-01T12:00:00Z',
      ...columns,
    };
    const keys = Object.keys(row);
    await q(`INSERT INTO subscriptions (${keys.join(', ')}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(', ')})`, Object.values(row));
  }

  /** What the code before issue 37 wrote, table by table, as its repositories did. */
  async function writeOldData(): Promise<void> {
    await q(
      `INSERT INTO sellers (id, name, email, legal_name, invoice_descriptor, postback_secret_encrypted, document_type, document_number)
       VALUES ($1, 'Loja', 'loja@example.com', 'Loja Ltda', 'LOJA', 'v1:not-a-real-secret', 'cnpj', $2)`,
      [SELLER, CNPJ],
    );
    await q(`INSERT INTO balances (seller_id) VALUES ($1)`, [SELLER]);
    const paidAt = { status: 'PAGO', completed_at: '2026-02-01T12:00:00Z' };

    // A standalone card sale, charged by the sandbox acquirer (the only one).
    await insertSale({ id: SALE.card, payment_method: 'CREDIT_CARD', amount_cents: 10000, system_fee_cents: 500, net_amount_cents: 9500, installments: 1, card_token: 'tok_1', card_last_four: '4242', card_brand: 'visa', external_transaction_id: 'sbx_card_101', ...paidAt });
    await q(`INSERT INTO sandbox_card_charges (reference, kind, outcome, amount_cents, installments, external_id) VALUES ($1, 'FIRST', 'APPROVED', 10000, 1, 'sbx_card_101')`, [String(SALE.card)]);
    await paid(SALE.card, 10000, 500, 'ACQUIRER_RECEIVABLE', 'sandbox');

    // A PIX sale whose charge the PSP issued (pix_provider api-pix), paid: its receipt applied.
    await insertSale({ id: SALE.pixPsp, payment_method: 'PIX', amount_cents: 8000, system_fee_cents: 400, net_amount_cents: 7600, pix_code: '000201...psp', pix_receiver_key: 'chave@psp.example', pix_provider: 'api-pix', external_transaction_id: pixTxid(SALE.pixPsp), pix_end_to_end_id: e2e(1), ...paidAt });
    await q(
      `INSERT INTO pix_receipts (id, end_to_end_id, txid, amount_cents, paid_at, sale_id, seller_id, outcome, seen_by) VALUES (1, $1, $2, 8000, '2026-02-01T12:00:00Z', $3, $4, 'APPLIED', 'NOTIFICATION')`,
      [e2e(1), pixTxid(SALE.pixPsp), SALE.pixPsp, SELLER],
    );
    await paid(SALE.pixPsp, 8000, 400, 'PSP_HOLDINGS', 'api-pix');

    // A PIX sale the sandbox issued (pix_provider sandbox), paid through its events route, then partly
    // refunded after the PIX rail moved to the PSP: the refund row named the rail's provider of the day
    // (api-pix), its postings the sale's pix_provider.
    await insertSale({ id: SALE.pixSandbox, payment_method: 'PIX', amount_cents: 5000, system_fee_cents: 250, net_amount_cents: 4750, pix_code: '000201...sbx', pix_receiver_key: 'sandbox-key', pix_provider: 'sandbox', external_transaction_id: 'sbx_pix_103', refunded_cents: 2000, refund_completed_cents: 2000, ...paidAt });
    await q(`INSERT INTO sandbox_payments (sale_id, amount_cents) VALUES ($1, 5000)`, [SALE.pixSandbox]);
    await paid(SALE.pixSandbox, 5000, 250, 'PSP_HOLDINGS', 'sandbox');
    await q(
      `INSERT INTO sale_refunds (id, sale_id, seller_id, amount_cents, seller_debit_cents, platform_cost_cents, status, provider, provider_refund_id, requested_at, completed_at)
       VALUES (1, $1, $2, 2000, 1900, 100, 'COMPLETED', 'api-pix', 'GWRF00000000000000000000000000001', now(), now())`,
      [SALE.pixSandbox, SELLER],
    );
    await post(SELLER, 'REFUND_REQUESTED', 'SALE', SALE.pixSandbox, [['AVAILABLE', null, -1900], ['REVERSAL_COST', null, -100], ['REFUNDS_IN_TRANSIT', 'sandbox', 2000]]);
    await post(SELLER, 'REFUND_SETTLED', 'SALE', SALE.pixSandbox, [['REFUNDS_IN_TRANSIT', 'sandbox', -2000], ['PSP_HOLDINGS', 'sandbox', 2000]]);

    // A boleto waiting for payment (the sandbox's, as every boleto was).
    await insertSale({ id: SALE.boleto, payment_method: 'BOLETO', status: 'PENDENTE', amount_cents: 4000, boleto_code: '2'.repeat(47), external_transaction_id: 'sbx_boleto_104', expires_at: '2026-03-01T12:00:00Z' });

    // Pix Automático at the PSP (journey 2): the recurrence is the PSP's (no sandbox_recurrences row). Its
    // charges name no pix_provider and were booked under the card provider configured, 'sandbox'.
    await insertSubscription({ id: SUB.psp, payment_method: 'PIX', automatic_pix_status: 'AUTHORIZED', automatic_pix_journey: 'JOURNEY_2', automatic_pix_recurrence_id: PSP_RECURRENCE, automatic_pix_authorized_at: '2026-01-01T12:00:00Z', current_period: 1, total_billings: 2, successful_billings: 2 });
    await insertSale({ id: SALE.pspOpening, subscription_id: SUB.psp, billing_period: 0, billing_attempt: 0, payment_method: 'PIX', amount_cents: 3000, system_fee_cents: 150, net_amount_cents: 2850, pix_code: '000201...rec', external_transaction_id: PSP_RECURRENCE, automatic_pix_due_date: '2026-01-05', automatic_pix_sent_at: '2026-01-03T12:00:00Z', pix_end_to_end_id: e2e(2), ...paidAt });
    await paid(SALE.pspOpening, 3000, 150, 'PSP_HOLDINGS', 'sandbox');
    await insertSale({ id: SALE.pspRenewal, subscription_id: SUB.psp, billing_period: 1, billing_attempt: 0, payment_method: 'PIX', amount_cents: 3000, system_fee_cents: 150, net_amount_cents: 2850, external_transaction_id: recurringChargeTxid(SALE.pspRenewal), automatic_pix_due_date: '2026-02-05', automatic_pix_sent_at: '2026-02-03T12:00:00Z', pix_end_to_end_id: e2e(3), refunded_cents: 1000, ...paidAt });
    await paid(SALE.pspRenewal, 3000, 150, 'PSP_HOLDINGS', 'sandbox');
    // Its refund, asked of the PSP and not confirmed yet: the row named the PIX rail's provider (api-pix), its
    // posting (the sale naming no pix_provider) the card provider.
    await q(
      `INSERT INTO sale_refunds (id, sale_id, seller_id, amount_cents, seller_debit_cents, platform_cost_cents, status, provider, provider_refund_id, requested_at)
       VALUES (2, $1, $2, 1000, 950, 50, 'PENDING', 'api-pix', 'GWRF00000000000000000000000000002', now())`,
      [SALE.pspRenewal, SELLER],
    );
    await post(SELLER, 'REFUND_REQUESTED', 'SALE', SALE.pspRenewal, [['AVAILABLE', null, -950], ['REVERSAL_COST', null, -50], ['REFUNDS_IN_TRANSIT', 'sandbox', 1000]]);

    // Pix Automático held by the sandbox: its recurrence and the recurring charge it settled.
    await q(
      `INSERT INTO sandbox_recurrences (id, contract, status, journey, amount_cents, period, first_date) VALUES ($1, $2, 'APROVADA', 'JOURNEY_2', 2000, 'MENSAL', '2026-01-05')`,
      [SANDBOX_RECURRENCE, recurrenceContract(SUB.sandbox)],
    );
    await insertSubscription({ id: SUB.sandbox, payment_method: 'PIX', amount_cents: 2000, automatic_pix_status: 'AUTHORIZED', automatic_pix_journey: 'JOURNEY_2', automatic_pix_recurrence_id: SANDBOX_RECURRENCE, current_period: 1, total_billings: 1, successful_billings: 1 });
    await insertSale({ id: SALE.sandboxRenewal, subscription_id: SUB.sandbox, billing_period: 1, billing_attempt: 0, payment_method: 'PIX', amount_cents: 2000, system_fee_cents: 100, net_amount_cents: 1900, external_transaction_id: recurringChargeTxid(SALE.sandboxRenewal), automatic_pix_due_date: '2026-02-05', automatic_pix_sent_at: '2026-02-03T12:00:00Z', ...paidAt });
    await q(
      `INSERT INTO sandbox_recurring_charges (txid, recurrence_id, status, due_date, amount_cents, paid_at) VALUES ($1, $2, 'CONCLUIDA', '2026-02-05', 2000, now())`,
      [recurringChargeTxid(SALE.sandboxRenewal), SANDBOX_RECURRENCE],
    );
    await paid(SALE.sandboxRenewal, 2000, 100, 'PSP_HOLDINGS', 'sandbox');
    // Refunded after the PIX rail moved to the PSP: the row named the PSP, which was asked and did not know
    // the Pix (FAILED); its postings under the card provider.
    await q(
      `INSERT INTO sale_refunds (id, sale_id, seller_id, amount_cents, seller_debit_cents, platform_cost_cents, status, provider, provider_refund_id, failure_reason, requested_at)
       VALUES (3, $1, $2, 500, 475, 25, 'FAILED', 'api-pix', 'GWRF00000000000000000000000000003', 'Pix not found', now())`,
      [SALE.sandboxRenewal, SELLER],
    );
    await post(SELLER, 'REFUND_REQUESTED', 'SALE', SALE.sandboxRenewal, [['AVAILABLE', null, -475], ['REVERSAL_COST', null, -25], ['REFUNDS_IN_TRANSIT', 'sandbox', 500]]);
    await post(SELLER, 'REFUND_FAILED', 'SALE', SALE.sandboxRenewal, [['REFUNDS_IN_TRANSIT', 'sandbox', -500], ['AVAILABLE', null, 475], ['REVERSAL_COST', null, 25]]);

    // A card subscription whose customer gave no document, and its opening charge.
    await insertSubscription({ id: SUB.card, payment_method: 'CREDIT_CARD', amount_cents: 6000, card_token: 'tok_131', card_last_four: '4242', card_brand: 'visa', customer_document: null, total_billings: 1, successful_billings: 1 });
    await insertSale({ id: SALE.cardOpening, subscription_id: SUB.card, billing_period: 0, billing_attempt: 0, payment_method: 'CREDIT_CARD', amount_cents: 6000, system_fee_cents: 300, net_amount_cents: 5700, installments: 1, card_token: 'tok_131', customer_document_type: null, customer_document_number: null, ...paidAt });
    await q(`INSERT INTO sandbox_card_charges (reference, kind, outcome, amount_cents, installments, external_id) VALUES ($1, 'FIRST', 'APPROVED', 6000, 1, 'sbx_card_131')`, [String(SALE.cardOpening)]);
    await paid(SALE.cardOpening, 6000, 300, 'ACQUIRER_RECEIVABLE', 'sandbox');

    // A plain PIX subscription of a company (CNPJ): its opening charge issued by the PSP, not paid yet.
    await insertSubscription({ id: SUB.pix, status: 'PENDING', payment_method: 'PIX', customer_document: CNPJ, started_at: null, next_billing_date: null });
    await insertSale({ id: SALE.pixOpening, subscription_id: SUB.pix, billing_period: 0, billing_attempt: 0, payment_method: 'PIX', status: 'PENDENTE', amount_cents: 3000, pix_code: '000201...sub', pix_receiver_key: 'chave@psp.example', pix_provider: 'api-pix', external_transaction_id: pixTxid(SALE.pixOpening), customer_document_type: 'cnpj', customer_document_number: CNPJ });

    // A company's card subscription whose opening sale is not there: its document type known by its length only.
    await insertSubscription({ id: SUB.noOpening, payment_method: 'CREDIT_CARD', card_token: 'tok_15', customer_document: CNPJ });

    // A withdrawal paid out by the sandbox payout provider.
    await q(
      `INSERT INTO withdrawals (id, seller_id, status, amount_cents, fee_fixed_cents, fee_variable_cents, fee_total_cents, net_amount_cents, pix_key, pix_key_type, external_id, processed_at)
       VALUES (1, $1, 'COMPLETED', 10000, 100, 0, 100, 9900, $2, 'CNPJ', 'sbx_payout_1', now())`,
      [SELLER, CNPJ],
    );
    await post(SELLER, 'WITHDRAWAL_REQUESTED', 'WITHDRAWAL', 1, [['AVAILABLE', null, -10000], ['BLOCKED', null, 10000]]);
    await post(SELLER, 'WITHDRAWAL_SENT', 'WITHDRAWAL', 1, [['PSP_HOLDINGS', 'sandbox', 9900], ['PAYOUT_IN_TRANSIT', 'sandbox', -9900]]);
    await post(SELLER, 'WITHDRAWAL_COMPLETED', 'WITHDRAWAL', 1, [['BLOCKED', null, -10000], ['FEE_REVENUE', null, 100], ['PAYOUT_IN_TRANSIT', 'sandbox', 9900]]);

    // A Pix the PSP received for no sale, owed back to its payer (the platform's own posting).
    await q(
      `INSERT INTO pix_receipts (id, end_to_end_id, amount_cents, paid_at, outcome, seen_by, return_id, return_status, return_requested_at)
       VALUES (2, $1, 700, now(), 'UNMATCHED', 'RECONCILIATION', 'GWRT00000000000000000000000000002', 'PENDING', now())`,
      [e2e(4)],
    );
    await post(null, 'PIX_RETURN_DUE', 'PIX_RECEIPT', 2, [['PSP_HOLDINGS', 'api-pix', -700], ['PAYER_RETURNS_DUE', null, 700]]);

    await q(`UPDATE balances SET available_cents = $2, blocked_cents = $3 WHERE seller_id = $1`, [SELLER, balance.available, balance.blocked]);

    // The API Pix's notifications waiting to be checked: /pix in pix_inbox, /rec and /cobr in automatic_pix_inbox.
    await q(`INSERT INTO pix_inbox (end_to_end_id, received_at, attempts, next_attempt_at) VALUES ($1, '2026-02-01T12:00:00Z', 0, '2026-02-01T12:00:00Z')`, [e2e(5)]);
    await q(`INSERT INTO pix_inbox (end_to_end_id, received_at, attempts, next_attempt_at, claimed_at) VALUES ($1, '2026-02-01T12:01:00Z', 2, '2026-02-01T12:05:00Z', now())`, [e2e(6)]);
    await q(`INSERT INTO automatic_pix_inbox (kind, resource_id, received_at, notifications, attempts, next_attempt_at) VALUES ('rec', $1, '2026-02-01T12:02:00Z', 3, 1, '2026-02-01T12:06:00Z')`, [PSP_RECURRENCE]);
    await q(`INSERT INTO automatic_pix_inbox (kind, resource_id, received_at) VALUES ('cobr', $1, '2026-02-01T12:03:00Z')`, [recurringChargeTxid(SALE.pspRenewal)]);
  }

  const OLD_PIX_PROVIDERS = {
    [SALE.card]: null,
    [SALE.pixPsp]: 'api-pix',
    [SALE.pixSandbox]: 'sandbox',
    [SALE.boleto]: null,
    [SALE.pspOpening]: null,
    [SALE.pspRenewal]: null,
    [SALE.sandboxRenewal]: null,
    [SALE.cardOpening]: null,
    [SALE.pixOpening]: 'api-pix',
  };
  const SALE_PROVIDERS = {
    [SALE.card]: 'sandbox',
    [SALE.pixPsp]: 'api-pix',
    [SALE.pixSandbox]: 'sandbox',
    [SALE.boleto]: 'sandbox',
    [SALE.pspOpening]: 'api-pix',
    [SALE.pspRenewal]: 'api-pix',
    [SALE.sandboxRenewal]: 'sandbox',
    [SALE.cardOpening]: 'sandbox',
    [SALE.pixOpening]: 'api-pix',
  };
  const SUBSCRIPTION_PROVIDERS = { [SUB.psp]: 'api-pix', [SUB.sandbox]: 'sandbox', [SUB.card]: 'sandbox', [SUB.pix]: null, [SUB.noOpening]: 'sandbox' };
  /** Each sale's provider accounts once upgraded: every one under the sale's own provider. */
  const UPGRADED_ACCOUNTS = {
    [SALE.card]: { ACQUIRER_RECEIVABLE: ['sandbox'] },
    [SALE.pixPsp]: { PSP_HOLDINGS: ['api-pix'] },
    [SALE.pixSandbox]: { PSP_HOLDINGS: ['sandbox'], REFUNDS_IN_TRANSIT: ['sandbox'] },
    [SALE.pspOpening]: { PSP_HOLDINGS: ['api-pix'] },
    [SALE.pspRenewal]: { PSP_HOLDINGS: ['api-pix'], REFUNDS_IN_TRANSIT: ['api-pix'] },
    [SALE.sandboxRenewal]: { PSP_HOLDINGS: ['sandbox'], REFUNDS_IN_TRANSIT: ['sandbox'] },
    [SALE.cardOpening]: { ACQUIRER_RECEIVABLE: ['sandbox'] },
  };
  const INBOX = [
    { provider: 'api-pix', kind: 'cobr', object_id: recurringChargeTxid(SALE.pspRenewal), received_at: new Date('2026-02-01T12:03:00Z'), notifications: 1, attempts: 0 },
    { provider: 'api-pix', kind: 'pix', object_id: e2e(5), received_at: new Date('2026-02-01T12:00:00Z'), notifications: 1, attempts: 0 },
    { provider: 'api-pix', kind: 'pix', object_id: e2e(6), received_at: new Date('2026-02-01T12:01:00Z'), notifications: 1, attempts: 2 },
    { provider: 'api-pix', kind: 'rec', object_id: PSP_RECURRENCE, received_at: new Date('2026-02-01T12:02:00Z'), notifications: 3, attempts: 1 },
  ];

  it('the data as the code before wrote it: Pix Automático charges booked under the sandbox, refunds naming the rail of the day', async () => {
    expect(await byId(`SELECT id, pix_provider AS value FROM sales`)).toEqual(OLD_PIX_PROVIDERS);
    expect((await saleProviderAccounts())[SALE.pspRenewal]).toEqual({ PSP_HOLDINGS: ['sandbox'], REFUNDS_IN_TRANSIT: ['sandbox'] });
    expect(await byId(`SELECT id, provider AS value FROM sale_refunds`)).toEqual({ 1: 'api-pix', 2: 'api-pix', 3: 'api-pix' });
  });

  it('upgrades: every record names the provider that holds it, the ledger balances and matches its providers, the inboxes are one, subscriptions keep their document type', async () => {
    expect(await migrate(MIGRATIONS)).toEqual(UPGRADES);

    // Sales: pix_provider became provider, set on every sale.
    expect(await columnsOf('sales')).not.toContain('pix_provider');
    expect(await byId(`SELECT id, provider AS value FROM sales`)).toEqual(SALE_PROVIDERS);
    expect((await q(`SELECT is_nullable FROM information_schema.columns WHERE table_name = 'sales' AND column_name = 'provider'`))[0].is_nullable).toBe('NO');
    expect(await byId(`SELECT id, provider AS value FROM subscriptions`)).toEqual(SUBSCRIPTION_PROVIDERS);

    // The ledger: each sale's provider entries under the sale's provider (the PSP's Pix Automático charges
    // and their refund moved from 'sandbox' to 'api-pix'); the withdrawal's and the receipt's untouched;
    // no entry added, removed or changed in amount; every posting still sums to zero.
    expect(await saleProviderAccounts()).toEqual(UPGRADED_ACCOUNTS);
    expect(await q(`SELECT id, posting_id, account, amount_cents FROM ledger_entries ORDER BY id`)).toEqual(entriesBefore);
    expect(await q(`SELECT posting_id, sum(amount_cents) AS sum FROM ledger_entries GROUP BY posting_id HAVING sum(amount_cents) <> 0`)).toEqual([]);
    expect(
      await q(`SELECT p.reference_type, e.account, e.provider, sum(e.amount_cents)::int AS sum FROM ledger_entries e JOIN ledger_postings p ON p.id = e.posting_id
                WHERE p.reference_type <> 'SALE' AND e.provider IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    ).toEqual([
      { reference_type: 'PIX_RECEIPT', account: 'PSP_HOLDINGS', provider: 'api-pix', sum: -700 },
      { reference_type: 'WITHDRAWAL', account: 'PAYOUT_IN_TRANSIT', provider: 'sandbox', sum: 0 },
      { reference_type: 'WITHDRAWAL', account: 'PSP_HOLDINGS', provider: 'sandbox', sum: 9900 },
    ]);
    // The append-only guard is back on.
    await expect(q(`UPDATE ledger_entries SET provider = provider WHERE id = (SELECT min(id) FROM ledger_entries)`)).rejects.toThrow(/append-only/);

    // Refunds name their sale's provider; withdrawals the payout provider; Pix receipts the PSP.
    expect(await byId(`SELECT id, provider AS value FROM sale_refunds`)).toEqual({ 1: 'sandbox', 2: 'api-pix', 3: 'sandbox' });
    expect(await q(`SELECT r.id FROM sale_refunds r JOIN sales s ON s.id = r.sale_id WHERE r.provider <> s.provider`)).toEqual([]);
    expect(await byId(`SELECT id, provider AS value FROM withdrawals`)).toEqual({ 1: 'sandbox' });
    expect(await byId(`SELECT id, provider AS value FROM pix_receipts`)).toEqual({ 1: 'api-pix', 2: 'api-pix' });

    // ledger:verify's provider check on the upgraded data: every paid sale backed by its provider's record,
    // and the PSP's sales (its Pix Automático charges now among them) hold what the ledger booked for them.
    const backing = await checkProviderBacking(db);
    expect(backing.problems).toEqual([]);
    expect(backing.returnsCompared).toEqual({ sales: 3, returns: 1, cents: 0 });
    expect(backing.heldAsPaid).toEqual(
      expect.arrayContaining([
        { provider: 'api-pix', sales: 3, cents: 14000 },
        { provider: 'sandbox', sales: 4, cents: 23000 },
      ]),
    );

    // One inbox: the waiting notifications moved, under the API Pix, each with its kind and counts.
    expect(await tableExists('pix_inbox')).toBe(false);
    expect(await tableExists('automatic_pix_inbox')).toBe(false);
    expect(await q(`SELECT provider, kind, object_id, received_at, notifications, attempts FROM provider_inbox ORDER BY kind, object_id`)).toEqual(INBOX);

    // Subscriptions keep their customer's document type: the opening sale's, else by the document's length; none without a document.
    expect(await byId(`SELECT id, customer_document_type AS value FROM subscriptions`)).toEqual({
      [SUB.psp]: 'cpf',
      [SUB.sandbox]: 'cpf',
      [SUB.card]: null,
      [SUB.pix]: 'cnpj',
      [SUB.noOpening]: 'cnpj',
    });
  });

  it('undoes the upgrade down to where it started (the old columns, tables and rows back), and upgrades again to the same data', async () => {
    for (let undone = 0; undone < UPGRADES.length; undone += 1) {
      const runner = await new DataSource({ type: 'postgres', url: url.toString(), migrations: MIGRATIONS, migrationsTransactionMode: 'each', extra: { max: 1 } }).initialize();
      try {
        await runner.undoLastMigration();
      } finally {
        await runner.destroy();
      }
    }
    expect((await executed()).at(-1)).toBe(BEFORE);

    expect(await columnsOf('sales')).toContain('pix_provider');
    expect(await columnsOf('sales')).not.toContain('provider');
    expect(await byId(`SELECT id, pix_provider AS value FROM sales`)).toEqual(OLD_PIX_PROVIDERS);
    for (const table of ['subscriptions', 'withdrawals', 'pix_receipts']) expect(await columnsOf(table)).not.toContain('provider');
    expect(await columnsOf('subscriptions')).not.toContain('customer_document_type');
    expect(await tableExists('provider_inbox')).toBe(false);
    expect(await q(`SELECT end_to_end_id AS id, attempts FROM pix_inbox ORDER BY 1`)).toEqual([
      { id: e2e(5), attempts: 0 },
      { id: e2e(6), attempts: 2 },
    ]);
    expect(await q(`SELECT kind, resource_id, notifications, attempts FROM automatic_pix_inbox ORDER BY kind`)).toEqual([
      { kind: 'cobr', resource_id: recurringChargeTxid(SALE.pspRenewal), notifications: 1, attempts: 0 },
      { kind: 'rec', resource_id: PSP_RECURRENCE, notifications: 3, attempts: 1 },
    ]);
    // The schema is the old one but for the provider columns widened to 32 characters, kept so that a name
    // written by the new code still fits (sales.pix_provider, sale_refunds.provider, ledger_entries.provider);
    // widening ledger_entries.provider rebuilt its CHECK, the same condition PostgreSQL now spells otherwise.
    const widened = ['sales.pix_provider', 'sale_refunds.provider', 'ledger_entries.provider'];
    const comparable = (rows: Row[]) =>
      rows.filter((row) => !(row.what === 'column' && widened.includes(row.name as string)) && row.name !== 'ledger_entries.ledger_entries_provider_check');
    expect(comparable(await schema())).toEqual(comparable(schemaBefore));
    expect(Object.fromEntries((await schema()).filter((row) => widened.includes(row.name as string)).map((row) => [row.name, row.definition]))).toEqual({
      'sales.pix_provider': 'character varying(32) YES ',
      'sale_refunds.provider': 'character varying(32) NO ',
      'ledger_entries.provider': 'character varying(32) YES ',
    });

    expect(await migrate(MIGRATIONS)).toEqual(UPGRADES);
    expect(await byId(`SELECT id, provider AS value FROM sales`)).toEqual(SALE_PROVIDERS);
    expect(await byId(`SELECT id, provider AS value FROM subscriptions`)).toEqual(SUBSCRIPTION_PROVIDERS);
    expect(await saleProviderAccounts()).toEqual(UPGRADED_ACCOUNTS);
    expect(await q(`SELECT provider, kind, object_id, received_at, notifications, attempts FROM provider_inbox ORDER BY kind, object_id`)).toEqual(INBOX);
    expect((await checkProviderBacking(db)).problems).toEqual([]);
  });
});
