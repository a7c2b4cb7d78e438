'use strict';
/**
 * The bare baseline of the benchmark: node:http + pg, no framework, no ORM. Per route it does the
 * database work the service does (the same authentication query as ApiKeyGuard, the same statements in
 * the same transactions, in the same order), the same BR Code and the same QR PNG (the `qrcode` library
 * with the options the service used before issue 11: level M, margin 2, 320 px), and the same Redis work
 * for a cashout (a Bull job, consumed here by a worker that does the service's payout statements).
 * It is what "as fast as this machine, PostgreSQL and Redis allow" looks like for these routes.
 *
 * Env: PORT, DATABASE_URL, REDIS_URL, DB_POOL_SIZE (the service's default, 20).
 */
const http = require('node:http');
const { createHash, randomBytes, timingSafeEqual } = require('node:crypto');
const { Pool } = require('pg');
const QRCode = require('qrcode');
const Queue = require('bull');
const { buildPixBrCode } = require('../dist/src/domain/pix-br-code');

const databaseUrl = process.env.DATABASE_URL;
const databaseName = new URL(databaseUrl).pathname.slice(1);
const pool = new Pool({ connectionString: databaseUrl, max: Number(process.env.DB_POOL_SIZE || 20) });
const payouts = new Queue('payouts', process.env.REDIS_URL || 'redis://127.0.0.1:6379', { prefix: `bull:baseline:${databaseName}` });

const SANDBOX_PIX_KEY = '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69';
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

class HttpError extends Error {
  constructor(status, body) {
    super(body.message);
    this.status = status;
    this.body = body;
  }
}

async function authenticate(request) {
  const publicKey = request.headers['x-api-public-key'];
  const privateKey = request.headers['x-api-private-key'];
  if (typeof publicKey !== 'string' || typeof privateKey !== 'string') throw new HttpError(401, { error: 'UNAUTHORIZED', message: 'Missing API keys' });
  const { rows } = await pool.query(
    `SELECT k.seller_id, k.private_key_hash, s.blocked
       FROM api_keys k JOIN sellers s ON s.id = k.seller_id
      WHERE k.public_key = $1 AND k.revoked_at IS NULL`,
    [publicKey],
  );
  const row = rows[0];
  const expected = Buffer.from(row ? row.private_key_hash : '0'.repeat(64));
  const given = Buffer.from(sha256(privateKey));
  if (!row || !timingSafeEqual(expected, given)) throw new HttpError(401, { error: 'UNAUTHORIZED', message: 'Invalid API key pair' });
  if (row.blocked) throw new HttpError(403, { error: 'FORBIDDEN', message: 'This account is blocked' });
  return row.seller_id;
}

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function inTransaction(work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const sellerById = async (sellerId) => (await pool.query('SELECT * FROM sellers WHERE id = $1 LIMIT 1', [sellerId])).rows[0];

function customer(row) {
  return { name: row.customer_name, email: row.customer_email, document: row.customer_document_number ?? '', phone: row.customer_phone ?? '' };
}

/** The sale's status history, one row per move in the move's transaction (as the service's dashboard needs). */
const recordStatus = (client, saleId, previous, status) =>
  client.query('INSERT INTO sale_status_changes (sale_id, previous_status, status) VALUES ($1, $2, $3)', [saleId, previous, status]);

async function insertSale(client, sale, items) {
  const [row] = (
    await client.query(
      `INSERT INTO sales (id, seller_id, status, payment_method, amount_cents, installments, customer_name, customer_email,
                          customer_document_type, customer_document_number, customer_phone, card_token, card_last_four, card_brand,
                          pix_code, pix_receiver_key, external_transaction_id, expires_at, postback_url, tracking, metadata, shipping)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) RETURNING *`,
      [
        sale.id, sale.sellerId, 'PENDENTE', sale.paymentMethod, sale.amountCents, sale.installments, sale.customer.name, sale.customer.email,
        null, null, sale.customer.phone ?? null, sale.cardToken ?? null, sale.cardLastFour ?? null, sale.cardBrand ?? null,
        sale.pixCode ?? null, sale.pixReceiverKey ?? null, sale.externalTransactionId ?? null, null, null, {}, null, null,
      ],
    )
  ).rows;
  await recordStatus(client, sale.id, null, 'PENDENTE');
  for (const [position, item] of items.entries()) {
    await client.query(
      `INSERT INTO sale_items (sale_id, position, title, unit_price_cents, quantity, tangible, product_id, plan_id, plan_name, external_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [sale.id, position, item.title, item.unitPrice, item.quantity, item.tangible, null, null, null, null],
    );
  }
  return row;
}

function saleAnswer(row, message, payment) {
  return {
    message,
    sale: {
      id: Number(row.id), amount: String(row.amount_cents), status: row.status, paymentMethod: row.payment_method,
      customer: customer(row), payment, shipping: null, createdAt: row.created_at.toISOString(),
    },
  };
}

const nextSaleId = async () => Number((await pool.query(`SELECT nextval(pg_get_serial_sequence('sales', 'id')) AS id`)).rows[0].id);

async function createSale(sellerId, body) {
  const seller = await sellerById(sellerId);
  const amountCents = body.amount;
  if (body.paymentMethod === 'PIX') {
    const id = await nextSaleId();
    const pixCode = buildPixBrCode({ key: SANDBOX_PIX_KEY, amountCents, merchantName: seller.commercial_name ?? seller.legal_name, merchantCity: 'SAO PAULO', txid: `SALE${id}` });
    const qrCodeBase64 = await QRCode.toDataURL(pixCode, { errorCorrectionLevel: 'M', margin: 2, width: 320 });
    const row = await inTransaction((client) =>
      insertSale(client, { id, sellerId, paymentMethod: 'PIX', amountCents, installments: null, customer: body.customer, pixCode, pixReceiverKey: SANDBOX_PIX_KEY, externalTransactionId: `sbx_pix_SALE${id}` }, body.items),
    );
    return saleAnswer(row, 'Sale created', { method: 'PIX', installments: null, pix: { key: pixCode, qrCodeBase64, expiresAt: null } });
  }
  // Card: the sale committed EM_PROCESSAMENTO, the sandbox charge outside the transaction, the outcome in a second one.
  const cardToken = `tok_sbx_aa_${randomBytes(12).toString('hex')}`;
  const id = await nextSaleId();
  const opened = await inTransaction(async (client) => {
    const row = await insertSale(client, { id, sellerId, paymentMethod: body.paymentMethod, amountCents, installments: 1, customer: body.customer, cardToken, cardLastFour: body.card.number.slice(-4), cardBrand: 'VISA' }, body.items);
    await client.query(`UPDATE sales SET status = $1, updated_at = now() WHERE id = $2 AND status = $3`, ['EM_PROCESSAMENTO', id, 'PENDENTE']);
    await recordStatus(client, id, 'PENDENTE', 'EM_PROCESSAMENTO');
    return row;
  });
  const reference = `sale_${id}`;
  const charge = (
    await pool.query(
      `WITH inserted AS (
         INSERT INTO sandbox_card_charges (reference, kind, outcome, amount_cents, installments, external_id)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (reference) DO NOTHING
         RETURNING outcome, external_id)
       SELECT outcome, external_id FROM inserted
       UNION ALL
       SELECT outcome, external_id FROM sandbox_card_charges WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      [reference, 'FIRST', 'APPROVED', amountCents, 1, `sbx_ch_${reference}_${randomBytes(6).toString('hex')}`],
    )
  ).rows[0];
  const feeCents = Math.floor((amountCents * 399 + 5000) / 10000) + 39;
  const netCents = amountCents - feeCents;
  const reserveCents = Math.floor((netCents * 1000 + 5000) / 10000);
  await inTransaction(async (client) => {
    await client.query('SELECT * FROM sales WHERE id = $1 FOR UPDATE', [id]);
    await client.query(
      `UPDATE sales SET external_transaction_id = $1, status = $2, system_fee_cents = $3, net_amount_cents = $4, reserve_amount_cents = $5,
              completed_at = $6, reserve_release_due_at = $7, reserve_settled_at = $8, updated_at = now() WHERE id = $9 AND status = $10`,
      [charge.external_id, 'PAGO', feeCents, netCents, reserveCents, new Date(), new Date(Date.now() + 30 * 86_400_000), null, id, 'EM_PROCESSAMENTO'],
    );
    await recordStatus(client, id, 'EM_PROCESSAMENTO', 'PAGO');
    await postLedger(client, sellerId, 'SALE', id, 'SALE_PAID', [
      ['AVAILABLE', netCents - reserveCents],
      ['BLOCKED', reserveCents],
      ['FEE_REVENUE', feeCents],
      ['ACQUIRER_RECEIVABLE', -(netCents + feeCents)],
    ].filter(([, amount]) => amount !== 0));
  });
  return saleAnswer({ ...opened, status: 'PAGO' }, 'Sale created and paid', { method: body.paymentMethod, installments: 1, card: { lastDigits: opened.card_last_four, brand: 'VISA' } });
}

async function lockBalance(client, sellerId) {
  return (await client.query('SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1 FOR UPDATE', [sellerId])).rows[0];
}

/**
 * A balanced posting: the balance moved first (its UPDATE takes the row lock and answers the balance
 * after), then the posting and its entries in one statement, as the double-entry ledger needs.
 */
async function postLedger(client, sellerId, referenceType, referenceId, kind, movements) {
  const sum = (account) => movements.filter(([a]) => a === account).reduce((total, [, amount]) => total + amount, 0);
  const available = sum('AVAILABLE');
  const blocked = sum('BLOCKED');
  const after = (
    await client.query(
      `UPDATE balances SET available_cents = available_cents + $2, blocked_cents = blocked_cents + $3, updated_at = now()
        WHERE seller_id = $1 RETURNING available_cents, blocked_cents`,
      [sellerId, available, blocked],
    )
  ).rows[0];
  const providerAccounts = ['ACQUIRER_RECEIVABLE', 'PSP_HOLDINGS', 'PAYOUT_IN_TRANSIT'];
  await client.query(
    `WITH p AS (
       INSERT INTO ledger_postings (seller_id, kind, reference_type, reference_id, available_delta_cents, blocked_delta_cents, available_after_cents, blocked_after_cents, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp()) RETURNING id)
     INSERT INTO ledger_entries (posting_id, seller_id, account, provider, amount_cents, kind, reference_type, reference_id)
     SELECT p.id, $1, e.account, e.provider, e.amount, $2, $3, $4 FROM p, unnest($9::varchar[], $10::varchar[], $11::bigint[]) AS e(account, provider, amount)`,
    [
      sellerId, kind, referenceType, referenceId, available, blocked, after.available_cents, after.blocked_cents,
      movements.map(([account]) => account),
      movements.map(([account]) => (providerAccounts.includes(account) ? 'sandbox' : null)),
      movements.map(([, amount]) => amount),
    ],
  );
}

async function createCashout(sellerId, body) {
  const amountCents = Math.round(Number(body.amount) * 100);
  const settings = (await pool.query('SELECT * FROM platform_settings WHERE id = $1 LIMIT 1', [1])).rows[0];
  if (settings && !settings.api_withdrawals_enabled) throw new HttpError(403, { message: 'disabled', errorType: 'API_WITHDRAWAL_DISABLED_GLOBALLY' });
  const seller = await sellerById(sellerId);
  if (!seller.transfer_enabled) throw new HttpError(403, { message: 'not allowed', errorType: 'TRANSFER_NOT_ALLOWED' });
  const feeCents = 200;
  const withdrawal = await inTransaction(async (client) => {
    const balance = await lockBalance(client, sellerId);
    if (Number(balance.available_cents) < amountCents) throw new HttpError(422, { message: 'Insufficient balance', errorType: 'INSUFFICIENT_BALANCE' });
    const [inserted] = (
      await client.query(
        `INSERT INTO withdrawals (seller_id, status, amount_cents, fee_fixed_cents, fee_variable_cents, fee_total_cents, net_amount_cents, pix_key, pix_key_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, created_at, updated_at`,
        [sellerId, 'PENDING', amountCents, feeCents, 0, feeCents, amountCents - feeCents, body.pixKey, body.pixKeyType ?? 'CPF'],
      )
    ).rows;
    await client.query('INSERT INTO withdrawal_status_changes (withdrawal_id, previous_status, status) VALUES ($1, $2, $3)', [inserted.id, null, 'PENDING']);
    const row = (await client.query('SELECT * FROM withdrawals WHERE id = $1 LIMIT 1', [inserted.id])).rows[0];
    await postLedger(client, sellerId, 'WITHDRAWAL', row.id, 'WITHDRAWAL_REQUESTED', [['AVAILABLE', -amountCents], ['BLOCKED', amountCents]]);
    return row;
  });
  payouts.add('request-payout', { withdrawalId: Number(withdrawal.id) }, { jobId: `payout-${withdrawal.id}`, removeOnComplete: true, removeOnFail: true }).catch(() => undefined);
  const reais = (value) => (Number(value) / 100).toFixed(2);
  return {
    id: Number(withdrawal.id), amount: reais(withdrawal.amount_cents), netAmount: reais(withdrawal.net_amount_cents), pixKey: withdrawal.pix_key,
    pixKeyType: withdrawal.pix_key_type, status: withdrawal.status, createdAt: withdrawal.created_at.toISOString(),
    fees: { fixed: reais(feeCents), variable: '0.00', total: reais(feeCents) },
  };
}

/** The service's payout job: the sandbox payout statements, outside any transaction. */
payouts.process('request-payout', 1, async (job) => {
  const id = job.data.withdrawalId;
  const withdrawal = (await pool.query('SELECT * FROM withdrawals WHERE id = $1 LIMIT 1', [id])).rows[0];
  if (!withdrawal || withdrawal.status !== 'PENDING' || withdrawal.external_id !== null) return;
  const reference = `withdrawal_${id}`;
  await pool.query('SELECT status, external_id FROM sandbox_payouts WHERE reference = $1', [reference]);
  await pool.query(
    `INSERT INTO sandbox_payouts (reference, status, net_amount_cents, pix_key_type, external_id) VALUES ($1, 'ACCEPTED', $2, $3, $4) ON CONFLICT (reference) DO NOTHING`,
    [reference, withdrawal.net_amount_cents, withdrawal.pix_key_type, `sbx_po_${reference}`],
  );
  const receipt = (await pool.query('SELECT status, external_id FROM sandbox_payouts WHERE reference = $1', [reference])).rows[0];
  await pool.query('UPDATE withdrawals SET external_id = $2, updated_at = now() WHERE id = $1 AND external_id IS NULL', [id, receipt.external_id]);
});

async function transaction(sellerId, id) {
  const sale = (await pool.query('SELECT * FROM sales WHERE id = $1 LIMIT 1', [id])).rows[0];
  if (!sale) throw new HttpError(404, { message: `Sale ${id} not found`, error: 'NOT_FOUND' });
  if (sale.seller_id !== sellerId) throw new HttpError(403, { message: 'Not yours', error: 'FORBIDDEN' });
  const items = (await pool.query('SELECT * FROM sale_items WHERE sale_id = $1 ORDER BY position ASC', [id])).rows;
  const money = (value) => (value === null ? null : Number(value));
  return {
    id: Number(sale.id), status: sale.status, amount: Number(sale.amount_cents), netAmount: money(sale.net_amount_cents),
    systemFee: money(sale.system_fee_cents), reserveAmount: money(sale.reserve_amount_cents), paymentMethod: sale.payment_method,
    date: sale.created_at.toISOString(), completedAt: sale.completed_at?.toISOString() ?? null, customer: customer(sale),
    items: items.map((item) => ({ id: item.id, title: item.title, unitPrice: Number(item.unit_price_cents), quantity: item.quantity, tangible: item.tangible })),
    pixKey: sale.pix_code, cardLastFour: sale.card_last_four, cardBrand: sale.card_brand, boletoCode: sale.boleto_code,
    externalTransactionId: sale.external_transaction_id, installments: sale.payment_method === 'CREDIT_CARD' ? sale.installments : null, shipping: sale.shipping,
  };
}

async function balance(sellerId) {
  const row = (await pool.query('SELECT seller_id, available_cents, blocked_cents, updated_at FROM balances WHERE seller_id = $1 LIMIT 1', [sellerId])).rows[0];
  const available = Number(row.available_cents);
  const blocked = Number(row.blocked_cents);
  return { available, blocked, total: available + blocked };
}

async function route(request) {
  const url = request.url;
  if (request.method === 'GET' && url === '/health/live') return [200, { status: 'ok' }];
  const sellerId = await authenticate(request);
  if (request.method === 'GET' && url === '/api/public/balance') return [200, await balance(sellerId)];
  const lookup = /^\/api\/transactions\/(\d+)$/.exec(url);
  if (request.method === 'GET' && lookup) return [200, await transaction(sellerId, Number(lookup[1]))];
  if (request.method === 'POST' && url === '/api/sales') return [201, await createSale(sellerId, await readJson(request))];
  if (request.method === 'POST' && url === '/api/public/cashout') return [201, await createCashout(sellerId, await readJson(request))];
  throw new HttpError(404, { error: 'NOT_FOUND', message: 'Unknown route' });
}

const server = http.createServer((request, response) => {
  route(request).then(
    ([status, body]) => send(response, status, body),
    (error) => send(response, error instanceof HttpError ? error.status : 500, error instanceof HttpError ? error.body : { error: 'INTERNAL_ERROR', message: error.message }),
  );
});
server.keepAliveTimeout = 65_000;

function send(response, status, body) {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

server.listen(Number(process.env.PORT || 3001), '127.0.0.1', () => process.send?.({ ready: true }));

process.on('SIGTERM', () => {
  server.close();
  Promise.allSettled([payouts.close(), pool.end()]).then(() => process.exit(0));
});
