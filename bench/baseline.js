'use strict';
/**
 * The lean baseline of the benchmark (issue 24): each route's contract done the leanest honest way, on
 * node:http + pg, with no framework, no ORM and nothing of the service's code. Every statement is a
 * named (prepared) pg query, written for this file rather than copied from the service; the answers have
 * the shapes the service gives (spec §2, §7). What "honest" keeps: the same secret checked the same
 * cryptographic way, the same validation rules, the same rows written (sale, items, status history,
 * double-entry posting, balance, outbox, withdrawal), the same crash-safe order around the provider calls.
 *
 * Round trips per request (the key pair's query included):
 *
 *   every route   1  the key pair and its seller, one query (SHA-256 of the private key compared in
 *                    constant time with the stored digest; malformed keys are compared with zeros, so an
 *                    unknown key costs the same). The columns the route needs of the seller (fees,
 *                    permissions, merchant name and city, the platform's cashout switch) come with it.
 *                    Once a minute per pair (as the service), a pair's last use is written after it.
 *   GET balance          +1  one SELECT of the seller's balances row.
 *   GET transaction      +1  one SELECT of the sale with its items (json_agg); 403 / 404 decided on it.
 *   POST sale, PIX       +1  the sale, its items and its status line in one statement (autocommit). The
 *                            BR Code carries the sale's id (txid SALE<id>), so ids come from the sales
 *                            sequence 64 at a time (one more round trip per 64 sales). The QR is a 1-bit
 *                            PNG of the code (the `qrcode` library's matrix, error correction M, 6 px per
 *                            module, 4-module quiet zone: the service's image), written here.
 *   POST sale, card      +3  (1) the sale committed EM_PROCESSAMENTO with its items and status lines
 *                            (PENDENTE, then EM_PROCESSAMENTO) and, with a postbackUrl, its outbox row,
 *                            in one statement in autocommit; (2) the charge at the sandbox acquirer by
 *                            reference (the sale's id), which records it in its table in one statement;
 *                            (3) the outcome in one statement: the sale PAGO with its fees, its status
 *                            line, the seller's balance moved (its row lock taken by that UPDATE and
 *                            held only for this statement), the double-entry posting (SALE_PAID:
 *                            AVAILABLE net − reserve, BLOCKED reserve, FEE_REVENUE fee, ACQUIRER_RECEIVABLE
 *                            −amount; the zero-sum trigger checks it) and the postback outbox row. If (2)
 *                            or (3) fails the sale stays EM_PROCESSAMENTO under its reference, the state
 *                            the recovery job resolves, and the answer says so (as the service's).
 *   POST cashout         +1  the withdrawal PENDING, its status line, the balance hold (available →
 *                            blocked, only if available covers it: the UPDATE's condition, under its row
 *                            lock) and its posting (WITHDRAWAL_REQUESTED) in one statement; then, after the
 *                            answer and outside any transaction, the payout (5 at a time, as the service's
 *                            Bull consumer): the sandbox payout provider's two statements by reference,
 *                            and one UPDATE recording its id. No Redis: the queue is in the process; a
 *                            payout lost with the process is the state the payout recovery job resends.
 *
 * Not implemented (501, never silently less): Idempotency-Key, BOLETO and TRANSFER sales, subscriptions.
 * The recovery jobs (card sales and payouts left between their commits) are periodic work, not per
 * request; the baseline leaves its rows in exactly the states they resolve.
 *
 * Env: PORT, DATABASE_URL, DB_POOL_SIZE (the service's default, 20), POSTBACK_ALLOW_PRIVATE_NETWORKS; with
 * CARD_PROVIDER=cielo the service's CIELO_* variables (CIELO_MAX_SOCKETS with the service's default, 512).
 */
const http = require('node:http');
const https = require('node:https');
const { createHash, randomBytes, randomUUID, timingSafeEqual } = require('node:crypto');
const { lookup } = require('node:dns/promises');
const { isIP } = require('node:net');
const zlib = require('node:zlib');
const { Pool } = require('pg');
const QRCode = require('qrcode');
const creditCardType = require('credit-card-type');
const ipaddr = require('ipaddr.js');
const { cpf, cnpj } = require('cpf-cnpj-validator');

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE || 20) });
const allowPrivatePostbacks = process.env.POSTBACK_ALLOW_PRIVATE_NETWORKS === 'true';

const SANDBOX_PIX_KEY = '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69';
const DEFAULT_CITY = 'SAO PAULO';
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------- statements

const q = (name, text) => ({ name, text });

const SELLER_KEY = `FROM api_keys k JOIN sellers s ON s.id = k.seller_id WHERE k.public_key = $1 AND k.revoked_at IS NULL`;
const KEY_COLUMNS = `k.id AS key_id, k.seller_id, k.private_key_hash, s.blocked,
       (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale`;
const SQL = {
  authRead: q('b-auth-read', `SELECT ${KEY_COLUMNS} ${SELLER_KEY}`),
  authSale: q(
    'b-auth-sale',
    `SELECT ${KEY_COLUMNS}, s.is_pix_available, s.is_credit_card_available, COALESCE(s.commercial_name, s.legal_name) AS merchant_name,
            s.address ->> 'city' AS merchant_city, s.fee_overrides ${SELLER_KEY}`,
  ),
  authCashout: q(
    'b-auth-cashout',
    `SELECT ${KEY_COLUMNS}, s.transfer_enabled, s.fee_overrides,
            (SELECT api_withdrawals_enabled FROM platform_settings WHERE id = 1) AS withdrawals_enabled ${SELLER_KEY}`,
  ),
  touchKey: q(
    'b-touch-key',
    `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
  ),
  balance: q('b-balance', `SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1`),
  lookup: q(
    'b-lookup',
    `SELECT s.seller_id, s.status, s.payment_method, s.amount_cents, s.net_amount_cents, s.system_fee_cents, s.reserve_amount_cents,
            s.installments, s.customer_name, s.customer_email, s.customer_document_number, s.customer_phone, s.pix_code,
            s.card_last_four, s.card_brand, s.boleto_code, s.external_transaction_id, s.shipping, s.created_at, s.completed_at,
            (SELECT json_agg(json_build_object('id', i.id, 'title', i.title, 'unitPrice', i.unit_price_cents,
                                               'quantity', i.quantity, 'tangible', i.tangible) ORDER BY i.position)
               FROM sale_items i WHERE i.sale_id = s.id) AS items
       FROM sales s WHERE s.id = $1`,
  ),
  saleIds: q('b-sale-ids', `SELECT nextval(pg_get_serial_sequence('sales', 'id')) AS id FROM generate_series(1, $1)`),
};

/** The sale's items from a JSON array param, with their position (`from`: where the sale's id is). */
const itemsFrom = (saleId, param, from = '') => `
  INSERT INTO sale_items (sale_id, position, title, unit_price_cents, quantity, tangible, product_id, plan_id, plan_name, external_id)
  SELECT ${saleId}, e.n - 1, e.item ->> 'title', (e.item ->> 'unitPrice')::bigint, (e.item ->> 'quantity')::int, (e.item ->> 'tangible')::boolean,
         (e.item ->> 'productId')::int, e.item ->> 'planId', e.item ->> 'planName', e.item ->> 'id'
    FROM ${from}jsonb_array_elements(${param}::jsonb) WITH ORDINALITY AS e(item, n)`;

// $1 id, $2 seller, $3 method, $4 amount, $5 customer name, $6 email, $7 doc type, $8 doc number, $9 phone,
// $10 pix code, $11 receiver key, $12 external id, $13 expires at, $14 shipping, $15 postback url,
// $16 tracking, $17 metadata, $18 items
SQL.pixSale = q(
  'b-pix-sale',
  `WITH s AS (
     INSERT INTO sales (id, provider, seller_id, status, payment_method, amount_cents, customer_name, customer_email, customer_document_type,
                        customer_document_number, customer_phone, pix_code, pix_receiver_key, external_transaction_id, expires_at,
                        shipping, postback_url, tracking, metadata)
     VALUES ($1, 'sandbox', $2, 'PENDENTE', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING created_at),
   i AS (${itemsFrom('$1', '$18')}),
   h AS (INSERT INTO sale_status_changes (sale_id, previous_status, status) VALUES ($1, NULL, 'PENDENTE'))
   SELECT created_at FROM s`,
);

const ISO = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// $1 seller, $2 method, $3 amount, $4 installments, $5 customer name, $6 email, $7 doc type, $8 doc number,
// $9 phone, $10 card token, $11 last four, $12 brand, $13 shipping, $14 postback url, $15 tracking,
// $16 metadata, $17 items; with a postback url: $18 event id, $19 changedAt, $20 the postback's
// transaction data without id, date and items (added here from the rows just written).
SQL.cardOpen = q(
  'b-card-open',
  `WITH s AS (
     INSERT INTO sales (provider, seller_id, status, payment_method, amount_cents, installments, customer_name, customer_email, customer_document_type,
                        customer_document_number, customer_phone, card_token, card_last_four, card_brand, shipping, postback_url,
                        tracking, metadata)
     VALUES ('sandbox', $1, 'EM_PROCESSAMENTO', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     RETURNING id, created_at),
   i AS (${itemsFrom('s.id', '$17', 's, ')} RETURNING id, position, title, unit_price_cents, quantity, tangible),
   h AS (INSERT INTO sale_status_changes (sale_id, previous_status, status)
         SELECT s.id, v.previous, v.status FROM s, (VALUES (1, NULL, 'PENDENTE'), (2, 'PENDENTE', 'EM_PROCESSAMENTO')) AS v(n, previous, status)
          ORDER BY v.n),
   items AS (SELECT jsonb_agg(jsonb_build_object('id', id, 'title', title, 'unitPrice', unit_price_cents, 'quantity', quantity, 'tangible', tangible)
                              ORDER BY position) AS list FROM i WHERE $14::text IS NOT NULL),
   q AS (INSERT INTO event_sequences AS es (object_type, object_id, last) SELECT 'sale', s.id, 1 FROM s WHERE $14::text IS NOT NULL
         ON CONFLICT (object_type, object_id) DO UPDATE SET last = es.last + 1 RETURNING last),
   o AS (INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, object_type, object_id, sequence)
         SELECT $18::uuid, $1, 'SALE_POSTBACK', 'sale:' || s.id, $14, true,
                jsonb_build_object('id', $18::uuid, 'type', 'transaction.status_changed', 'previousStatus', 'PENDENTE',
                                   'status', 'EM_PROCESSAMENTO', 'changedAt', $19::text, 'sequence', q.last,
                                   'data', $20::jsonb || jsonb_build_object('id', s.id, 'date', ${ISO('s.created_at')}, 'items', items.list)),
                'transaction.status_changed', 'sale', s.id, q.last
           FROM s, items, q)
   SELECT s.id, s.created_at, items.list AS items FROM s, items`,
);

// The sandbox acquirer (platform.md §3): one charge per reference, recorded in its own table; a second
// charge of the reference answers the first one's result.
SQL.acquirerCharge = q(
  'b-acquirer-charge',
  `WITH recorded AS (
     INSERT INTO sandbox_card_charges (reference, kind, outcome, amount_cents, installments, external_id)
     VALUES ($1, 'FIRST', $2, $3, $4, $5) ON CONFLICT (reference) DO NOTHING RETURNING outcome, external_id)
   SELECT outcome, external_id FROM recorded
   UNION ALL
   SELECT outcome, external_id FROM sandbox_card_charges WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM recorded)`,
);
SQL.acquirerRead = q('b-acquirer-read', `SELECT outcome, external_id FROM sandbox_card_charges WHERE reference = $1`);

/** The postback outbox row of a move (`u`: the sale moved, with its previous status); `id`, `payload`: the params. */
const POSTBACK = (next, id, payload) => `
   q AS (INSERT INTO event_sequences AS es (object_type, object_id, last)
         SELECT 'sale', u.id, 1 FROM u WHERE u.postback_url IS NOT NULL AND ${payload}::jsonb IS NOT NULL
         ON CONFLICT (object_type, object_id) DO UPDATE SET last = es.last + 1 RETURNING object_id, last),
   o AS (INSERT INTO outbox_events (event_id, seller_id, channel, aggregate_key, url, signed, payload, event_type, object_type, object_id, sequence)
         SELECT ${id}::uuid, $2, 'SALE_POSTBACK', 'sale:' || u.id, u.postback_url, true,
                jsonb_set(${payload}::jsonb, '{previousStatus}', to_jsonb(u.previous::text)) || jsonb_build_object('status', ${next}, 'sequence', q.last),
                'transaction.status_changed', 'sale', u.id, q.last
           FROM u JOIN q ON q.object_id = u.id)`;

// $1 sale, $2 seller, $3 external id, $4 fee, $5 net, $6 reserve (= blocked delta), $7 completed at,
// $8 reserve release due at, $9 reserve settled at, $10 available delta, $11 amount, $12 event id,
// $13 the postback (without previousStatus) or null. A sale the recovery already marked FALHA is paid by
// a late approval (spec 3.1, FALHA → PAGO); one already resolved otherwise is left as it is.
SQL.cardPaid = q(
  'b-card-paid',
  `WITH locked AS (SELECT id, status FROM sales WHERE id = $1 FOR UPDATE),
   u AS (UPDATE sales s SET status = 'PAGO', external_transaction_id = $3, system_fee_cents = $4, net_amount_cents = $5,
                            reserve_amount_cents = $6, completed_at = $7, reserve_release_due_at = $8, reserve_settled_at = $9, updated_at = now()
           FROM locked WHERE s.id = locked.id AND locked.status IN ('EM_PROCESSAMENTO', 'FALHA')
         RETURNING s.id, locked.status AS previous, s.postback_url),
   h AS (INSERT INTO sale_status_changes (sale_id, previous_status, status) SELECT id, previous, 'PAGO' FROM u),
   b AS (UPDATE balances SET available_cents = available_cents + $10, blocked_cents = blocked_cents + $6, updated_at = now()
           FROM u WHERE seller_id = $2 RETURNING available_cents, blocked_cents),
   p AS (INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents,
                                      available_after_cents, blocked_after_cents, created_at)
         SELECT $2, 'SALE_PAID', 'SALE', $1, $10, $6, b.available_cents, b.blocked_cents, clock_timestamp() FROM b RETURNING id),
   e AS (INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id)
         SELECT p.id, $2, m.account, m.provider, m.amount, 'SALE_PAID', 'SALE', $1
           FROM p, (VALUES ('AVAILABLE', NULL, $10::bigint), ('BLOCKED', NULL, $6::bigint), ('FEE_REVENUE', NULL, $4::bigint),
                           ('ACQUIRER_RECEIVABLE', 'sandbox', -$11::bigint)) AS m(account, provider, amount)
          WHERE m.amount <> 0),
   ${POSTBACK(`'PAGO'`, '$12', '$13')}
   SELECT previous FROM u`,
);

// CARD_PROVIDER=cielo (issue 39's latency benchmark): the same statements for a sale Cielo holds — written
// with provider 'cielo', paid with the amount Cielo reported captured (ledger:verify's evidence) and the
// receivable at Cielo.
SQL.cardOpenCielo = q('b-card-open-cielo', SQL.cardOpen.text.replace("VALUES ('sandbox', $1,", () => "VALUES ('cielo', $1,"));
SQL.cardPaidCielo = q(
  'b-card-paid-cielo',
  SQL.cardPaid.text
    .replace('reserve_settled_at = $9, updated_at = now()', () => 'reserve_settled_at = $9, provider_amount_cents = $11, updated_at = now()')
    .replace("('ACQUIRER_RECEIVABLE', 'sandbox', -$11::bigint)", () => "('ACQUIRER_RECEIVABLE', 'cielo', -$11::bigint)"),
);

// Refused or failed: $1 sale, $2 seller, $3 external id, $4 status, $5 event id, $6 postback or null.
SQL.cardNotPaid = q(
  'b-card-not-paid',
  `WITH u AS (UPDATE sales SET status = $4, external_transaction_id = $3, updated_at = now()
                WHERE id = $1 AND status = 'EM_PROCESSAMENTO' RETURNING id, 'EM_PROCESSAMENTO'::text AS previous, postback_url),
   h AS (INSERT INTO sale_status_changes (sale_id, previous_status, status) SELECT id, previous, $4 FROM u),
   ${POSTBACK('$4::text', '$5', '$6')}
   SELECT previous FROM u`,
);
SQL.saleState = q('b-sale-state', `SELECT status, external_transaction_id, completed_at FROM sales WHERE id = $1`);

// $1 seller, $2 amount, $3 fixed fee, $4 variable fee, $5 total fee, $6 net, $7 pix key, $8 key type.
// No row when available does not cover the amount (nothing is written then).
SQL.cashout = q(
  'b-cashout',
  `WITH b AS (UPDATE balances SET available_cents = available_cents - $2, blocked_cents = blocked_cents + $2, updated_at = now()
                WHERE seller_id = $1 AND available_cents >= $2 RETURNING available_cents, blocked_cents),
   w AS (INSERT INTO withdrawals (provider, seller_id, status, amount_cents, fee_fixed_cents, fee_variable_cents, fee_total_cents, net_amount_cents, pix_key, pix_key_type)
         SELECT 'sandbox', $1, 'PENDING', $2, $3, $4, $5, $6, $7, $8 FROM b RETURNING id, created_at),
   h AS (INSERT INTO withdrawal_status_changes (withdrawal_id, previous_status, status) SELECT id, NULL, 'PENDING' FROM w),
   p AS (INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents,
                                      available_after_cents, blocked_after_cents, created_at)
         SELECT $1, 'WITHDRAWAL_REQUESTED', 'WITHDRAWAL', w.id, -$2::bigint, $2, b.available_cents, b.blocked_cents, clock_timestamp()
           FROM w, b RETURNING id, reference_id),
   e AS (INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id)
         SELECT p.id, $1, m.account, NULL, m.amount, 'WITHDRAWAL_REQUESTED', 'WITHDRAWAL', p.reference_id
           FROM p, (VALUES ('AVAILABLE', -$2::bigint), ('BLOCKED', $2::bigint)) AS m(account, amount))
   SELECT id, created_at FROM w`,
);
// The sandbox payout provider (its own two statements), then the provider's id recorded once.
SQL.payoutRequest = q(
  'b-payout-request',
  `INSERT INTO sandbox_payouts (reference, status, net_amount_cents, pix_key_type, external_id) VALUES ($1, 'ACCEPTED', $2, $3, $4)
   ON CONFLICT (reference) DO NOTHING`,
);
SQL.payoutRead = q('b-payout-read', `SELECT status, external_id FROM sandbox_payouts WHERE reference = $1`);
SQL.payoutSent = q('b-payout-sent', `UPDATE withdrawals SET external_id = $2, updated_at = now() WHERE id = $1 AND external_id IS NULL`);

const run = (statement, values) => pool.query({ name: statement.name, text: statement.text, values });

// ---------------------------------------------------------------- errors, answers

class Refusal extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

const invalid = (field, message) => new Refusal(400, 'VALIDATION_ERROR', `Invalid field ${field}: ${message}`, { field, message });
const missing = (fields) => new Refusal(400, 'MISSING_FIELDS', `Missing required fields: ${fields.slice(0, 20).join(', ')}`, { missingFields: fields.slice(0, 20) });

/** Error bodies by endpoint family (spec §7). */
const FAMILIES = {
  sales: (e) => (e.code === 'UNAUTHORIZED' ? { message: 'Unauthorized', details: e.message } : { message: e.message, error: e.code, ...(e.details ? { details: e.details } : {}) }),
  transactions: (e) => ({ message: e.message, error: e.code, ...(e.details ? { details: e.details } : {}) }),
  account: (e) => ({ error: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) }),
  cashout: (e) =>
    CASHOUT_BUSINESS.has(e.code) ? { message: e.message, errorType: e.code === 'INTERNAL_ERROR' ? 'GENERAL_ERROR' : e.code } : { message: e.message, error: e.code, ...(e.details ? { details: e.details } : {}) },
};
const CASHOUT_BUSINESS = new Set(['INSUFFICIENT_BALANCE', 'API_WITHDRAWAL_DISABLED_GLOBALLY', 'TRANSFER_NOT_ALLOWED', 'MINIMUM_VALUE', 'MAXIMUM_VALUE', 'GENERAL_ERROR', 'INTERNAL_ERROR']);

function send(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function fail(response, family, error) {
  if (error instanceof Refusal) return send(response, error.status, FAMILIES[family](error));
  console.error(error);
  const body = FAMILIES[family](new Refusal(500, 'INTERNAL_ERROR', 'Internal server error'));
  send(response, 500, { ...body, requestId: randomUUID() });
}

// ---------------------------------------------------------------- authentication

const PUBLIC_KEY = /^pk_[A-Za-z0-9_-]{16,60}$/;
const PRIVATE_KEY = /^sk_[A-Za-z0-9_-]{16,60}$/;
const HEX_DIGEST = /^[0-9a-f]{64}$/;
const ZERO_DIGEST = Buffer.alloc(32);
/** When this process last wrote each pair's last use (the service writes it at most once a minute). */
const touched = new Map();

/**
 * The seller of the request's key pair, with the columns `statement` reads, or a refusal: 401 when a key
 * is missing, malformed, unknown, revoked or of another pair; 403 for a blocked seller.
 */
async function authenticate(request, statement) {
  const publicKey = request.headers['x-api-public-key'];
  const privateKey = request.headers['x-api-private-key'];
  if (typeof publicKey !== 'string' || typeof privateKey !== 'string' || !publicKey || !privateKey) {
    throw new Refusal(401, 'UNAUTHORIZED', 'Missing API keys: send X-Api-Public-Key and X-Api-Private-Key');
  }
  const row = PUBLIC_KEY.test(publicKey) && PRIVATE_KEY.test(privateKey) ? (await run(statement, [publicKey])).rows[0] : undefined;
  const stored = row && HEX_DIGEST.test(row.private_key_hash) ? Buffer.from(row.private_key_hash, 'hex') : null;
  const equal = timingSafeEqual(createHash('sha256').update(privateKey, 'utf8').digest(), stored ?? ZERO_DIGEST);
  if (!equal || !stored) throw new Refusal(401, 'UNAUTHORIZED', 'Invalid API key pair');
  if (row.blocked) throw new Refusal(403, 'FORBIDDEN', 'This account is blocked');
  const last = touched.get(row.key_id);
  const now = Date.now();
  if (last === undefined ? row.stale : now - last >= 60_000) {
    if (touched.size >= 10_000) touched.clear();
    touched.set(row.key_id, now);
    await run(SQL.touchKey, [row.key_id]);
  } else if (last === undefined) touched.set(row.key_id, now);
  return row;
}

// ---------------------------------------------------------------- money

const FEES = {
  pixPercentBps: 99, pixFixedCents: 0, creditCardPercentBps: 399, creditCardFixedCents: 39, debitCardPercentBps: 199, debitCardFixedCents: 39,
  boletoPercentBps: 0, boletoFixedCents: 349, transferPercentBps: 99, transferFixedCents: 0, cardReservePercentBps: 1000, cardReserveDays: 30,
  chargebackFineCents: 1500, cashoutPercentBps: 0, cashoutFixedCents: 200,
};
/** The seller's fee schedule: the defaults with its overrides. */
const feesOf = (overrides) => (overrides && Object.keys(overrides).length > 0 ? { ...FEES, ...overrides } : FEES);
/** A share in basis points, rounded half up to the cent. */
const share = (amount, bps) => Math.floor((amount * bps + 5000) / 10000);
const reais = (centsValue) => `${Math.floor(centsValue / 100)}.${String(centsValue % 100).padStart(2, '0')}`;

/** Cents of an amount in reais (a number or a decimal string, at most two decimals), or null. */
function reaisToCents(value) {
  let text;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    text = String(value);
  } else if (typeof value === 'string') text = value.trim();
  else return null;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match) return null;
  const total = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(total) ? total : null;
}

// ---------------------------------------------------------------- PIX: BR Code and QR PNG

/** An EMV field: id, two-digit length, value. */
const emv = (id, value) => `${id}${String(value.length).padStart(2, '0')}${value}`;
const ascii = (text, max) =>
  text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7E]/g, '').trim().toUpperCase().slice(0, max).trim();

function crc16(text) {
  let crc = 0xffff;
  for (let i = 0; i < text.length; i += 1) {
    crc ^= text.charCodeAt(i) << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** The PIX copy-and-paste code (BR Code, merchant-presented, one payment), CRC16-CCITT last. */
function brCode(key, amountCents, merchantName, merchantCity, txid) {
  const body =
    emv('00', '01') + emv('01', '12') + emv('26', emv('00', 'br.gov.bcb.pix') + emv('01', key)) + emv('52', '0000') + emv('53', '986') +
    emv('54', reais(amountCents)) + emv('58', 'BR') + emv('59', ascii(merchantName, 25) || 'RECEBEDOR') + emv('60', ascii(merchantCity, 15) || 'BRASIL') +
    emv('62', emv('05', txid)) + '6304';
  return body + crc16(body);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const SCALE = 6;
const QUIET = 4;

function pngChunk(type, data) {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'ascii');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/** The code's QR (error correction M) as a 1-bit grayscale PNG data URI: one packed line per module row, repeated SCALE times. */
function qrDataUri(code) {
  const { size, data } = QRCode.create(code, { errorCorrectionLevel: 'M' }).modules;
  const side = (size + 2 * QUIET) * SCALE;
  const stride = 1 + ((side + 7) >> 3); // filter byte + packed pixels
  const raw = Buffer.alloc(stride * side, 0xff);
  for (let y = 0; y < side; y += 1) raw[y * stride] = 0;
  for (let row = 0; row < size; row += 1) {
    const first = (row + QUIET) * SCALE * stride;
    for (let column = 0; column < size; column += 1) {
      if (!data[row * size + column]) continue;
      for (let x = (column + QUIET) * SCALE, end = x + SCALE; x < end; x += 1) raw[first + 1 + (x >> 3)] &= ~(0x80 >> (x & 7));
    }
    for (let copy = 1; copy < SCALE; copy += 1) raw.copy(raw, first + copy * stride, first, first + stride);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth 1, grayscale, deflate, no interlace
  const png = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', zlib.deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

/** Sale ids taken from the sequence 64 at a time (a PIX code carries its sale's id, known before the insert). */
const saleIds = { free: [], refill: null };
async function nextSaleId() {
  while (saleIds.free.length === 0) {
    saleIds.refill ??= run(SQL.saleIds, [64]).then(
      ({ rows }) => {
        saleIds.free.push(...rows.map((row) => Number(row.id)));
        saleIds.refill = null;
      },
      (error) => {
        saleIds.refill = null;
        throw error;
      },
    );
    await saleIds.refill;
  }
  return saleIds.free.shift();
}

// ---------------------------------------------------------------- validation (POST /api/sales)

const METHODS = new Set(['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const isInt = (value, min, max) => Number.isInteger(value) && value >= min && value <= max;
const isText = (value, min, max) => typeof value === 'string' && value.length >= min && value.length <= max && !UNSTORABLE.test(value);
const TRACKING = ['utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm', 'src', 'sck'];

function luhn(number) {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i += 1) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1 && (digit *= 2) > 9) digit -= 9;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The sale request's problems, as the service reports them: missing required fields first, else the first invalid one. */
function checkSale(body) {
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  const absent = [];
  const need = (value, path) => value === undefined || value === null ? (absent.push(path), false) : true;
  const card = body.paymentMethod === 'CREDIT_CARD' || body.paymentMethod === 'DEBIT_CARD';
  need(body.amount, 'amount');
  need(body.paymentMethod, 'paymentMethod');
  if (need(body.customer, 'customer') && isObject(body.customer)) {
    need(body.customer.name, 'customer.name');
    need(body.customer.email, 'customer.email');
  }
  if (need(body.items, 'items') && Array.isArray(body.items)) {
    body.items.forEach((item, n) => {
      if (!isObject(item)) return;
      for (const key of ['title', 'unitPrice', 'quantity', 'tangible']) need(item[key], `items[${n}].${key}`);
    });
  }
  if (card && need(body.card, 'card') && isObject(body.card)) {
    for (const key of ['number', 'holderName', 'expirationMonth', 'expirationYear', 'cvv']) need(body.card[key], `card.${key}`);
  }
  if (body.paymentMethod === 'PIX') need(body.pix, 'pix');
  if (Array.isArray(body.items) && body.items.some((item) => item?.tangible === true)) need(body.shipping, 'shipping');
  if (absent.length > 0) throw missing(absent);

  if (!isInt(body.amount, 1, 1_000_000_000)) throw invalid('amount', 'amount must be a positive integer number of cents, at most 1000000000');
  if (!METHODS.has(body.paymentMethod)) throw invalid('paymentMethod', `paymentMethod must be one of: ${[...METHODS].join(', ')}`);
  const { customer } = body;
  if (!isObject(customer)) throw invalid('customer', 'customer must be an object');
  if (!isText(customer.name, 1, 200)) throw invalid('customer.name', 'name must be 1 to 200 characters');
  if (typeof customer.email !== 'string' || customer.email.length > 254 || !EMAIL.test(customer.email)) throw invalid('customer.email', 'email must be a valid e-mail address');
  if (customer.phone !== undefined && !/^\d{10,13}$/.test(customer.phone)) throw invalid('customer.phone', 'phone must be 10 to 13 digits, no other characters');
  if (customer.document !== undefined) {
    const { type, number } = isObject(customer.document) ? customer.document : {};
    if (type !== 'cpf' && type !== 'cnpj') throw invalid('customer.document.type', 'type must be cpf or cnpj');
    if (typeof number !== 'string' || !(type === 'cpf' ? /^\d{11}$/.test(number) && cpf.isValid(number) : /^\d{14}$/.test(number) && cnpj.isValid(number))) {
      throw invalid('customer.document.number', `number must be a valid ${type.toUpperCase()}`);
    }
  }
  if (!Array.isArray(body.items) || body.items.length < 1 || body.items.length > 100) throw invalid('items', 'items must hold 1 to 100 items');
  body.items.forEach((item, n) => {
    const at = `items[${n}]`;
    if (!isObject(item)) throw invalid(at, 'each item must be an object');
    if (!isText(item.title, 1, 255)) throw invalid(`${at}.title`, 'title must be 1 to 255 characters');
    if (!isInt(item.unitPrice, 0, 1_000_000_000)) throw invalid(`${at}.unitPrice`, 'unitPrice must be an integer number of cents');
    if (!isInt(item.quantity, 1, 100_000)) throw invalid(`${at}.quantity`, 'quantity must be an integer between 1 and 100000');
    if (typeof item.tangible !== 'boolean') throw invalid(`${at}.tangible`, 'tangible must be a boolean');
    if (item.productId !== undefined && !isInt(item.productId, 1, 2_147_483_647)) throw invalid(`${at}.productId`, 'productId must be a positive integer');
    for (const [key, max] of [['planId', 100], ['planName', 255], ['id', 100]]) {
      if (item[key] !== undefined && !isText(item[key], 0, max)) throw invalid(`${at}.${key}`, `${key} must be at most ${max} characters`);
    }
  });
  if (body.card !== undefined) {
    const c = body.card;
    if (!isObject(c)) throw invalid('card', 'card must be an object');
    if (typeof c.number !== 'string' || !luhn(c.number)) throw invalid('card.number', 'number must be a card number of 12 to 19 digits that passes the Luhn check');
    if (!isText(c.holderName, 2, 100)) throw invalid('card.holderName', 'holderName must be 2 to 100 characters');
    if (!/^(0[1-9]|1[0-2])$/.test(c.expirationMonth)) throw invalid('card.expirationMonth', 'expirationMonth must be two digits, 01 to 12');
    if (!/^20\d{2}$/.test(c.expirationYear)) throw invalid('card.expirationYear', 'expirationYear must be four digits, 20YY');
    if (!/^\d{3,4}$/.test(c.cvv)) throw invalid('card.cvv', 'cvv must be 3 or 4 digits');
    if (c.installments !== undefined && !isInt(c.installments, 1, 12)) throw invalid('card.installments', 'installments must be an integer between 1 and 12');
  }
  if (body.pix !== undefined) {
    if (!isObject(body.pix)) throw invalid('pix', 'pix must be an object');
    if (body.pix.key !== undefined && !isText(body.pix.key, 1, 77)) throw invalid('pix.key', 'key must be 1 to 77 characters');
    if (body.pix.expiresInDays !== undefined && !isInt(body.pix.expiresInDays, 1, 365)) throw invalid('pix.expiresInDays', 'expiresInDays must be an integer between 1 and 365');
  }
  if (body.shipping !== undefined) {
    const s = body.shipping;
    if (!isObject(s)) throw invalid('shipping', 'shipping must be an object');
    for (const [key, max] of [['street', 200], ['streetNumber', 20], ['complement', 100], ['neighborhood', 100], ['city', 100]]) {
      if (s[key] !== undefined && !isText(s[key], 0, max)) throw invalid(`shipping.${key}`, `${key} must be at most ${max} characters`);
    }
    if (s.zipCode !== undefined && !/^\d{8}$/.test(s.zipCode)) throw invalid('shipping.zipCode', 'zipCode must be 8 digits');
    if (s.state !== undefined && !/^[A-Z]{2}$/.test(s.state)) throw invalid('shipping.state', 'state must be 2 upper-case letters');
    if (s.country !== undefined && !/^[A-Za-z]{2}$/.test(s.country)) throw invalid('shipping.country', 'country must be 2 letters');
  }
  if (body.installments !== undefined) {
    if (!isObject(body.installments)) throw invalid('installments', 'installments must be an object');
    if (body.installments.number !== undefined && !isInt(body.installments.number, 1, 12)) throw invalid('installments.number', 'installments must be an integer between 1 and 12');
  }
  if (body.postbackUrl !== undefined && (typeof body.postbackUrl !== 'string' || body.postbackUrl.length > 2048 || !/^https?:\/\/[^\s/?#]+/i.test(body.postbackUrl))) {
    throw invalid('postbackUrl', 'postbackUrl must be an http or https URL');
  }
  for (const key of TRACKING) if (body[key] !== undefined && !isText(body[key], 0, 255)) throw invalid(key, `${key} must be at most 255 characters`);
  if (body.metadata !== undefined) {
    if (!isObject(body.metadata)) throw invalid('metadata', 'metadata must be a JSON object');
    const text = JSON.stringify(body.metadata);
    if (Buffer.byteLength(text) > 16_384) throw invalid('metadata', 'metadata must be at most 16384 bytes of JSON');
    if (/\\u0000|\\ud[89ab]/i.test(text)) throw invalid('metadata', 'holds characters that cannot be stored');
  }
  // Rules across fields (spec 7.1).
  if (body.paymentMethod !== 'CREDIT_CARD' && (body.installments?.number !== undefined || body.card?.installments !== undefined)) {
    throw invalid(body.installments?.number !== undefined ? 'installments.number' : 'card.installments', 'installments are for CREDIT_CARD sales only');
  }
  if (body.installments?.number !== undefined && body.card?.installments !== undefined && body.installments.number !== body.card.installments) {
    throw invalid('card.installments', 'card.installments and installments.number disagree');
  }
  if (card) {
    const today = new Date();
    if (Number(body.card.expirationYear) * 12 + Number(body.card.expirationMonth) < today.getUTCFullYear() * 12 + today.getUTCMonth() + 1) {
      throw invalid('card.expirationYear', 'the card has expired');
    }
  }
  if (body.amount < 100) throw new Refusal(422, 'MINIMUM_AMOUNT', 'amount must be at least 100 cents');
}

/** A postbackUrl the outbox may call: http(s), no credentials, every address public (unless allowed). 400 otherwise. */
async function checkPostbackUrl(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('postbackUrl', 'postbackUrl is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('postbackUrl', 'postbackUrl must be an http or https URL');
  if (url.username || url.password) throw invalid('postbackUrl', 'postbackUrl must not carry a user name or password');
  if (allowPrivatePostbacks) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses;
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return; // does not resolve now: accepted, each delivery resolves it again
  }
  const isPublic = (address) => {
    if (!ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    if (parsed.kind() === 'ipv6' && parsed.parts.slice(0, 6).every((part) => part === 0)) return false;
    return parsed.range() === 'unicast';
  };
  const blocked = addresses.find((address) => !isPublic(address));
  if (blocked) throw invalid('postbackUrl', `postbackUrl resolves to ${blocked}, a loopback, private or link-local address`);
}

// ---------------------------------------------------------------- routes

const MESSAGES = {
  PAGO: 'Sale created and paid',
  RECUSADO: 'Sale created: the card was refused',
  FALHA: 'Sale created: the payment failed to process',
  EM_PROCESSAMENTO: 'Sale created: the card payment is being processed; its outcome comes by postback and lookup',
};

const customerAnswer = (c) => ({ name: c.name, email: c.email, document: c.document?.number ?? '', phone: c.phone ?? '' });
const itemsJson = (items) =>
  JSON.stringify(items.map((i) => ({ title: i.title, unitPrice: i.unitPrice, quantity: i.quantity, tangible: i.tangible, productId: i.productId, planId: i.planId, planName: i.planName, id: i.id })));
const trackingOf = (body) => {
  const tracking = {};
  for (const key of TRACKING) if (body[key] !== undefined) tracking[key] = body[key];
  return tracking;
};

function saleAnswer(id, body, status, createdAt, payment) {
  return {
    message: MESSAGES[status] ?? 'Sale created',
    sale: {
      id,
      amount: String(body.amount),
      status,
      paymentMethod: body.paymentMethod,
      customer: customerAnswer(body.customer),
      payment,
      shipping: body.shipping ? JSON.stringify(body.shipping) : null,
      createdAt: createdAt.toISOString(),
    },
  };
}

async function createSale(request, body) {
  const seller = await authenticate(request, SQL.authSale);
  checkSale(body);
  if (request.headers['idempotency-key'] !== undefined) throw new Refusal(501, 'NOT_SUPPORTED', 'The baseline does not implement Idempotency-Key');
  const { paymentMethod } = body;
  if (paymentMethod === 'BOLETO' || paymentMethod === 'TRANSFER' || body.subscription !== undefined) {
    throw new Refusal(501, 'NOT_SUPPORTED', 'The baseline implements PIX and card sales without subscriptions');
  }
  const allowed = paymentMethod === 'PIX' ? seller.is_pix_available : seller.is_credit_card_available;
  if (!allowed) throw new Refusal(403, 'FORBIDDEN', `${paymentMethod} payments are not enabled for this account`);
  if (body.postbackUrl) await checkPostbackUrl(body.postbackUrl);
  const sellerId = seller.seller_id;
  const c = body.customer;
  const common = [c.name, c.email, c.document?.type ?? null, c.document?.number ?? null, c.phone ?? null];
  const extras = [body.shipping ?? null, body.postbackUrl ?? null, trackingOf(body), body.metadata ?? null];

  if (paymentMethod === 'PIX') {
    const id = await nextSaleId();
    const receiverKey = body.pix.key ?? SANDBOX_PIX_KEY;
    const code = brCode(receiverKey, body.amount, seller.merchant_name, seller.merchant_city ?? DEFAULT_CITY, `SALE${id}`);
    const qrCodeBase64 = qrDataUri(code);
    const expiresAt = body.pix.expiresInDays ? new Date(Date.now() + body.pix.expiresInDays * DAY_MS) : null;
    const { rows } = await run(SQL.pixSale, [
      id, sellerId, 'PIX', body.amount, ...common, code, receiverKey, `sbx_pix_SALE${id}`, expiresAt, ...extras, itemsJson(body.items),
    ]);
    return saleAnswer(id, body, 'PENDENTE', rows[0].created_at, { method: 'PIX', installments: null, pix: { key: code, qrCodeBase64, expiresAt: expiresAt?.toISOString() ?? null } });
  }

  // Card: (1) committed EM_PROCESSAMENTO, (2) charged by reference, (3) the outcome with its money.
  const card = body.card;
  const installments = paymentMethod === 'CREDIT_CARD' ? (body.installments?.number ?? card.installments ?? 1) : null;
  const [match] = creditCardType(card.number);
  const brand = match ? (BRANDS[match.type] ?? match.type.toUpperCase()) : 'UNKNOWN';
  const behaviour = TEST_CARDS[card.number] ?? 'aa';
  // Cielo keeps no card before a charge: no token (the card goes in the charge itself).
  const token = CIELO ? null : `tok_sbx_${behaviour}_${randomBytes(12).toString('hex')}`;
  const lastFour = card.number.slice(-4);
  const openedAt = new Date();
  const postback = body.postbackUrl
    ? { id: randomUUID(), data: transactionData(body, { status: 'EM_PROCESSAMENTO', installments, lastFour, brand, completedAt: null }) }
    : null;
  const opened = (
    await run(CIELO ? SQL.cardOpenCielo : SQL.cardOpen, [
      sellerId, paymentMethod, body.amount, installments, ...common, token, lastFour, brand, ...extras, itemsJson(body.items),
      ...(postback ? [postback.id, openedAt.toISOString(), JSON.stringify(postback.data)] : [null, null, null]),
    ])
  ).rows[0];
  const id = opened.id;
  const payment = { method: paymentMethod, installments, card: { lastDigits: lastFour, brand } };
  const answer = (status) => saleAnswer(id, body, status, opened.created_at, payment);

  let charge;
  try {
    const reference = String(id);
    if (CIELO) {
      charge = await cieloCharge(reference, body, card, installments ?? 1, match?.type);
      if (charge === null) return answer('EM_PROCESSAMENTO');
    } else {
    const outcome = { a: 'APPROVED', r: 'REFUSED', f: 'FAILED' }[behaviour[0]];
    charge = (await run(SQL.acquirerCharge, [reference, outcome, body.amount, installments ?? 1, `sbx_ch_${reference}_${randomBytes(6).toString('hex')}`])).rows[0];
    // A row a concurrent charge of the reference committed after this statement began: read again.
    charge ??= (await run(SQL.acquirerRead, [reference])).rows[0];
    if (charge.outcome === 'VOIDED') charge = { outcome: 'FAILED', external_id: charge.external_id };
    }
  } catch (error) {
    console.error(`sale ${id}: the charge did not answer; it stays EM_PROCESSAMENTO`, error.message);
    return answer('EM_PROCESSAMENTO');
  }
  try {
    const now = new Date();
    const event = postback ? randomUUID() : null;
    const data = { id, date: opened.created_at.toISOString(), items: opened.items };
    if (charge.outcome === 'APPROVED') {
      const fees = feesOf(seller.fee_overrides);
      const [rate, fixed] = paymentMethod === 'CREDIT_CARD' ? [fees.creditCardPercentBps, fees.creditCardFixedCents] : [fees.debitCardPercentBps, fees.debitCardFixedCents];
      const fee = Math.min(share(body.amount, rate) + fixed, body.amount);
      const net = body.amount - fee;
      const reserve = share(net, fees.cardReservePercentBps);
      const releaseAt = reserve > 0 ? new Date(now.getTime() + fees.cardReserveDays * DAY_MS) : null;
      const message = postback
        ? postbackOf(event, now, { ...transactionData(body, { status: 'PAGO', installments, lastFour, brand, completedAt: now, fee, net, reserve, externalId: charge.external_id }), ...data })
        : null;
      const { rows } = await run(CIELO ? SQL.cardPaidCielo : SQL.cardPaid, [
        id, sellerId, charge.external_id, fee, net, reserve, now, releaseAt, reserve > 0 ? null : now, net - reserve, body.amount, event, message,
      ]);
      if (rows.length === 1) return answer('PAGO');
    } else {
      const status = charge.outcome === 'REFUSED' ? 'RECUSADO' : 'FALHA';
      const message = postback
        ? postbackOf(event, now, { ...transactionData(body, { status, installments, lastFour, brand, completedAt: null, externalId: charge.external_id }), ...data })
        : null;
      const { rows } = await run(SQL.cardNotPaid, [id, sellerId, charge.external_id, status, event, message]);
      if (rows.length === 1) return answer(status);
    }
    // Moved by someone else between the commits (the recovery job): the sale as it is now.
    return answer((await run(SQL.saleState, [id])).rows[0].status);
  } catch (error) {
    console.error(`sale ${id}: the outcome was not saved; it stays EM_PROCESSAMENTO`, error.message);
    return answer('EM_PROCESSAMENTO');
  }
}

// ---- CARD_PROVIDER=cielo: the charge is Cielo's POST /1/sales (the service's adapter's request, sent once) ----
const CIELO = process.env.CARD_PROVIDER === 'cielo';
const CIELO_BRANDS = { visa: 'Visa', mastercard: 'Master', 'american-express': 'Amex', elo: 'Elo', jcb: 'JCB', 'diners-club': 'Diners', discover: 'Discover', hipercard: 'Hipercard' };
const cieloAgent = CIELO
  ? new https.Agent({
    keepAlive: true,
    maxSockets: Number(process.env.CIELO_MAX_SOCKETS || 512),
    // One TLS context for every connection (as the service's client), not one built per new socket.
    secureContext: require('node:tls').createSecureContext(process.env.CIELO_CA_FILE ? { ca: require('node:fs').readFileSync(process.env.CIELO_CA_FILE) } : {}),
  })
  : null;

/** Cielo's answer to the sale's one POST: APPROVED (Status 2), REFUSED (3) or FAILED, with its PaymentId; null when no answer came (the sale stays EM_PROCESSAMENTO). */
function cieloCharge(reference, body, card, installments, type) {
  const payload = JSON.stringify({
    MerchantOrderId: `${process.env.CIELO_ORDER_ID_PREFIX || 'GW'}${reference}`,
    Customer: { Name: body.customer.name.slice(0, 255) },
    Payment: {
      Type: 'CreditCard', Amount: body.amount, Currency: 'BRL', Country: 'BRA', Installments: installments, Interest: 'ByMerchant', Capture: true,
      CreditCard: {
        CardNumber: card.number, Holder: card.holderName.normalize('NFD').replace(/[^A-Za-z ]/g, '').slice(0, 25),
        ExpirationDate: `${card.expirationMonth}/${card.expirationYear}`, SecurityCode: card.cvv, Brand: CIELO_BRANDS[type],
      },
    },
  });
  return new Promise((resolve) => {
    const request = https.request(`${process.env.CIELO_API_URL}/1/sales/`, {
      method: 'POST', agent: cieloAgent, timeout: Number(process.env.CIELO_TIMEOUT_MS || 30000),
      headers: { MerchantId: process.env.CIELO_MERCHANT_ID, MerchantKey: process.env.CIELO_MERCHANT_KEY, RequestId: randomUUID(), 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('error', () => resolve(null));
      response.on('end', () => {
        try {
          const answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (response.statusCode !== 201 && response.statusCode !== 200) return resolve({ outcome: 'FAILED', external_id: '' });
          const status = Number(answer.Payment?.Status);
          resolve({ outcome: status === 2 ? 'APPROVED' : status === 3 ? 'REFUSED' : 'FAILED', external_id: answer.Payment?.PaymentId ?? '' });
        } catch {
          resolve(null);
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(null));
    request.end(payload);
  });
}

const BRANDS = {
  visa: 'VISA', mastercard: 'MASTERCARD', elo: 'ELO', 'american-express': 'AMEX', hipercard: 'HIPERCARD', hiper: 'HIPER', 'diners-club': 'DINERS',
  discover: 'DISCOVER', jcb: 'JCB', unionpay: 'UNIONPAY', maestro: 'MAESTRO', mir: 'MIR',
};
/** The sandbox's test cards (platform.md §3): first and later charges' outcomes, a for approved, r refused, f failed. */
const TEST_CARDS = { '4000000000000002': 'rr', '4000000000000119': 'ff', '4000000000000341': 'ar' };

/** The postback's `data` (spec 2.3) of a card sale, without id, date and items (added from the rows). */
function transactionData(body, s) {
  return {
    status: s.status,
    amount: body.amount,
    ...(s.net !== undefined ? { netAmount: s.net, systemFee: s.fee, reserveAmount: s.reserve } : {}),
    paymentMethod: body.paymentMethod,
    completedAt: s.completedAt?.toISOString() ?? null,
    customer: customerAnswer(body.customer),
    pixKey: null,
    cardLastFour: s.lastFour,
    cardBrand: s.brand,
    boletoCode: null,
    ...(s.externalId ? { externalTransactionId: s.externalId } : {}),
    ...(s.installments !== null ? { installments: s.installments } : {}),
    ...(body.shipping ? { shipping: body.shipping } : {}),
  };
}

/** A transaction.status_changed postback without previousStatus and status (set by the statement). */
const postbackOf = (event, now, data) => JSON.stringify({ id: event, type: 'transaction.status_changed', previousStatus: null, changedAt: now.toISOString(), data });

async function transaction(request, rawId) {
  const seller = await authenticate(request, SQL.authRead);
  const id = /^\d{1,10}$/.test(rawId) ? Number(rawId) : NaN;
  if (!(id >= 1 && id <= 2_147_483_647)) {
    const message = `Invalid id "${rawId.slice(0, 40)}": it must be a positive integer`;
    throw new Refusal(400, 'INVALID_ID', message, { field: 'id', message });
  }
  const sale = (await run(SQL.lookup, [id])).rows[0];
  if (!sale) throw new Refusal(404, 'NOT_FOUND', `Sale ${id} not found`);
  if (sale.seller_id !== seller.seller_id) throw new Refusal(403, 'FORBIDDEN', `Sale ${id} belongs to another account`);
  const answer = {
    id,
    status: sale.status,
    amount: Number(sale.amount_cents),
    paymentMethod: sale.payment_method,
    date: sale.created_at.toISOString(),
    completedAt: sale.completed_at?.toISOString() ?? null,
    customer: { name: sale.customer_name, email: sale.customer_email, document: sale.customer_document_number ?? '', phone: sale.customer_phone ?? '' },
    items: sale.items ?? [],
    pixKey: sale.pix_code,
    cardLastFour: sale.card_last_four,
    cardBrand: sale.card_brand,
    boletoCode: sale.boleto_code,
  };
  if (sale.net_amount_cents !== null) answer.netAmount = Number(sale.net_amount_cents);
  if (sale.system_fee_cents !== null) answer.systemFee = Number(sale.system_fee_cents);
  if (sale.reserve_amount_cents !== null) answer.reserveAmount = Number(sale.reserve_amount_cents);
  if (sale.external_transaction_id !== null) answer.externalTransactionId = sale.external_transaction_id;
  if (sale.payment_method === 'CREDIT_CARD' && sale.installments !== null) answer.installments = sale.installments;
  if (sale.shipping !== null) answer.shipping = sale.shipping;
  return answer;
}

async function balance(request) {
  const seller = await authenticate(request, SQL.authRead);
  const row = (await run(SQL.balance, [seller.seller_id])).rows[0];
  const available = row ? Number(row.available_cents) : 0;
  const blocked = row ? Number(row.blocked_cents) : 0;
  return { available, blocked, total: available + blocked };
}

const PIX_KEY_CHECKS = {
  CPF: [(key) => /^\d{11}$/.test(key) && cpf.isValid(key), 'pixKey must be a CPF: 11 digits with valid check digits'],
  CNPJ: [(key) => /^\d{14}$/.test(key) && cnpj.isValid(key), 'pixKey must be a CNPJ: 14 digits with valid check digits'],
  EMAIL: [(key) => EMAIL.test(key), 'pixKey must be an e-mail address'],
  PHONE: [(key) => /^\+55\d{10,11}$/.test(key), 'pixKey must be a phone number with +55 and 10 or 11 digits'],
  RANDOM: [(key) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key), 'pixKey must be a random key (a UUID)'],
};

async function cashout(request, body) {
  const seller = await authenticate(request, SQL.authCashout);
  if (request.headers['idempotency-key'] !== undefined) throw new Refusal(501, 'NOT_SUPPORTED', 'The baseline does not implement Idempotency-Key');
  if (!isObject(body)) throw invalid('body', 'must be a JSON object');
  const absent = ['amount', 'pixKey'].filter((key) => body[key] === undefined || body[key] === null);
  if (absent.length > 0) throw missing(absent);
  if (typeof body.amount !== 'number' || !(body.amount > 0)) throw invalid('amount', 'amount must be a number of reais greater than zero');
  if (!isText(body.pixKey, 8, 77)) throw invalid('pixKey', 'pixKey must be 8 to 77 characters');
  const keyType = body.pixKeyType ?? 'CPF';
  const check = PIX_KEY_CHECKS[keyType];
  if (!check) throw invalid('pixKeyType', `pixKeyType must be one of: ${Object.keys(PIX_KEY_CHECKS).join(', ')}`);
  const amount = reaisToCents(body.amount);
  if (amount === null || amount <= 0) throw invalid('amount', 'amount must be a number of reais greater than zero, with at most two decimals');
  if (!check[0](body.pixKey)) throw invalid('pixKey', check[1]);
  if (seller.withdrawals_enabled === false) throw new Refusal(403, 'API_WITHDRAWAL_DISABLED_GLOBALLY', 'Cashouts through the API are disabled on the platform for now');
  if (!seller.transfer_enabled) throw new Refusal(403, 'TRANSFER_NOT_ALLOWED', 'Cashouts are not enabled for this account');
  if (amount < 10_000) throw new Refusal(422, 'MINIMUM_VALUE', 'The smallest cashout is 100.00 reais');
  if (amount > 10_000_000) throw new Refusal(422, 'MAXIMUM_VALUE', 'The largest cashout is 100000.00 reais');
  const fees = feesOf(seller.fee_overrides);
  const fixed = fees.cashoutFixedCents;
  const variable = share(amount, fees.cashoutPercentBps);
  const total = fixed + variable;
  if (total >= amount) throw new Refusal(422, 'MINIMUM_VALUE', `The cashout must be more than its fees of ${reais(total)} reais`);
  const net = amount - total;
  const row = (await run(SQL.cashout, [seller.seller_id, amount, fixed, variable, total, net, body.pixKey, keyType])).rows[0];
  if (!row) throw new Refusal(422, 'INSUFFICIENT_BALANCE', `Available balance is less than ${reais(amount)}`);
  payouts.push({ id: row.id, net, keyType });
  drainPayouts();
  return {
    id: row.id, amount: reais(amount), netAmount: reais(net), pixKey: body.pixKey, pixKeyType: keyType, status: 'PENDING',
    createdAt: row.created_at.toISOString(), fees: { fixed: reais(fixed), variable: reais(variable), total: reais(total) },
  };
}

/** Payouts to request, after their withdrawals' commit, 5 at a time. */
const payouts = [];
let payoutsRunning = 0;
function drainPayouts() {
  while (payoutsRunning < 5 && payouts.length > 0) {
    const payout = payouts.shift();
    payoutsRunning += 1;
    sendPayout(payout)
      .catch((error) => console.error(`withdrawal ${payout.id}: payout not sent (the recovery job resends it)`, error.message))
      .finally(() => {
        payoutsRunning -= 1;
        drainPayouts();
      });
  }
}

async function sendPayout({ id, net, keyType }) {
  const reference = String(id); // the payout reference: the withdrawal's id
  await run(SQL.payoutRequest, [reference, net, keyType, `sbx_po_${reference}`]);
  const receipt = (await run(SQL.payoutRead, [reference])).rows[0];
  if (receipt.status !== 'ACCEPTED') return; // cancelled at the provider: its callback moves the withdrawal
  await run(SQL.payoutSent, [id, receipt.external_id]);
}

// ---------------------------------------------------------------- server

const BODY_LIMIT = 1024 * 1024;

function readJson(request) {
  return new Promise((resolve, reject) => {
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) return reject(new Refusal(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json'));
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) chunks.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      if (size > BODY_LIMIT) return reject(new Refusal(413, 'PAYLOAD_TOO_LARGE', 'The body must be at most 1 MB'));
      try {
        resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
      } catch {
        reject(new Refusal(400, 'MALFORMED_JSON', 'The body is not valid JSON', { field: 'body', message: 'The body is not valid JSON' }));
      }
    });
  });
}

const answer = (response, family, status, work) =>
  work.then(
    (body) => send(response, status, body),
    (error) => fail(response, family, error),
  );

const server = http.createServer((request, response) => {
  const { method, url } = request;
  if (method === 'GET' && url === '/api/public/balance') return answer(response, 'account', 200, balance(request));
  if (method === 'GET' && url.startsWith('/api/transactions/')) return answer(response, 'transactions', 200, transaction(request, url.slice(18)));
  if (method === 'POST' && url === '/api/sales') return answer(response, 'sales', 201, readJson(request).then((body) => createSale(request, body)));
  if (method === 'POST' && url === '/api/public/cashout') return answer(response, 'cashout', 201, readJson(request).then((body) => cashout(request, body)));
  if (method === 'GET' && url === '/health/live') return send(response, 200, { status: 'ok' });
  send(response, 404, { error: 'NOT_FOUND', message: `Cannot ${method} ${url.slice(0, 100)}` });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT || 3001), '127.0.0.1');

process.on('SIGTERM', () => {
  server.close();
  const wait = () => (payoutsRunning > 0 || payouts.length > 0 ? setTimeout(wait, 50) : pool.end().then(() => process.exit(0)));
  setTimeout(() => process.exit(0), 5000).unref();
  wait();
});
