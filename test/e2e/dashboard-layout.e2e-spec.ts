import { Page } from 'playwright-core';
import { adminHeaders, TestSeller } from './setup/factories';
import { eventually } from './setup/processes';
import { Receiver } from './setup/receiver';
import { card, createSale, customer, saleBody, sendEvent } from './setup/sales';
import { emailOf, newContext, PASSWORD, screenshot, signedInSeller, signIn, useDashboardSession } from './setup/browser';

/** The two screens the dashboard is checked on (issue 36): a laptop and a phone. */
const WIDTHS = [
  { name: 'desktop', viewport: { width: 1280, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
];

/** The pages a seller opens for amounts and statuses (and the overview's latest sales), with the fewest amount cells each must show. */
const PAGES = [
  { name: 'overview', path: '/dashboard', minAmounts: 5 },
  { name: 'statement', path: '/dashboard/statement', minAmounts: 40 },
  { name: 'sales', path: '/dashboard/sales', minAmounts: 10 },
  { name: 'subscriptions', path: '/dashboard/subscriptions', minAmounts: 1 },
  { name: 'withdrawals', path: '/dashboard/withdrawals', minAmounts: 6 },
  { name: 'deliveries', path: '/dashboard/integrations/deliveries', minAmounts: 0 },
];

/** A customer whose name and e-mail are as long as real ones get. */
const longCustomer = { ...customer, name: 'Maria Aparecida dos Santos Oliveira Albuquerque', email: 'maria.aparecida.oliveira@empresa-de-exemplo.com.br' };

interface Layout {
  innerWidth: number;
  scrollWidth: number;
  amounts: number;
  statuses: number;
  rows: number;
  /** Tables that scroll sideways inside their box. */
  scrollingTables: number;
  /** The scroll hint shown above each of those tables (its caption), or "none". */
  hints: string[];
  /** Every amount or status the seller cannot see, and why. */
  problems: string[];
}

/**
 * What the page shows within the screen's width: the document's overflow, and for every amount cell (a
 * table cell holding "R$") and every status badge, whether its text lies inside the viewport, has a size,
 * is not hidden, is not clipped by a box that scrolls or cuts, and is not cut inside its own cell. Run in
 * the page (plain JavaScript: the tests compile without the DOM's types).
 */
const LAYOUT_SCRIPT = `(() => {
  const width = window.innerWidth;
  const problems = [];
  const describe = (element) => element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).split(' ').join('.') : '') + ' "' + (element.textContent || '').trim().slice(0, 40) + '"';
  const check = (element) => {
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility !== 'visible' || Number(style.opacity) === 0) return problems.push(describe(element) + ' is hidden');
    const range = document.createRange();
    range.selectNodeContents(element);
    const text = range.getBoundingClientRect();
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || text.width === 0 || text.height === 0) return problems.push(describe(element) + ' has no size');
    if (text.left < -0.5 || text.right > width + 0.5) return problems.push(describe(element) + ' lies at ' + Math.round(text.left) + '–' + Math.round(text.right) + ' px, outside the ' + width + ' px screen');
    for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement) {
      if (getComputedStyle(parent).overflowX === 'visible') continue;
      const clip = parent.getBoundingClientRect();
      if (text.left < clip.left - 0.5 || text.right > clip.right + 0.5) return problems.push(describe(element) + ' is cut by ' + describe(parent).slice(0, 40));
    }
    if (element.scrollWidth > element.clientWidth + 1 && style.overflowX !== 'visible') return problems.push(describe(element) + ' is cut inside its cell');
  };
  const amounts = [...document.querySelectorAll('main td')].filter((cell) => /R\\$/.test(cell.textContent || ''));
  const statuses = [...document.querySelectorAll('main td .status')];
  [...amounts, ...statuses].forEach(check);
  const scrolling = [...document.querySelectorAll('main table')].filter((table) => table.scrollWidth > table.parentElement.clientWidth + 1);
  return {
    innerWidth: width,
    scrollWidth: document.documentElement.scrollWidth,
    amounts: amounts.length,
    statuses: statuses.length,
    rows: document.querySelectorAll('main tbody tr').length,
    scrollingTables: scrolling.length,
    hints: scrolling.map((table) => getComputedStyle(table.parentElement, '::before').content),
    problems,
  };
})()`;

const layoutOf = (page: Page): Promise<Layout> => page.evaluate<Layout>(LAYOUT_SCRIPT);

describe('Dashboard layout at 1280 px and 390 px with real data (issue 36), in a real browser', () => {
  const s = useDashboardSession({ OUTBOX_POLL_MS: '100' });
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  /** A seller with sales of every kind, refunds, a MED, a chargeback, withdrawals, a subscription and postbacks delivered. */
  async function sellerWithEverything(): Promise<TestSeller> {
    const seller = await signedInSeller(s.t, s.page);
    const sale = (method: Parameters<typeof saleBody>[0], overrides: Record<string, unknown> = {}) =>
      createSale(s.t, seller, saleBody(method, { postbackUrl: receiver.url, customer: longCustomer, ...overrides }));
    const event = async (id: number, name: string) => expect({ name, status: (await sendEvent(s.t, seller, id, name)).status }).toEqual({ name, status: 200 });
    const refund = async (id: number, body: Record<string, unknown>) => s.t.http.post(`/api/sales/${id}/refunds`).set(seller.headers).send(body).expect(201);

    const bigPix = await sale('PIX', { amount: 987_654_321 }); // R$ 9.876.543,21: the widest figures a sale can make
    await event(bigPix.id, 'PAYMENT_CONFIRMED');
    await refund(bigPix.id, { amount: 123_456_789 });
    const medPix = await sale('PIX', { amount: 50_000 });
    await event(medPix.id, 'PAYMENT_CONFIRMED');
    await event(medPix.id, 'MED_OPENED');
    await sale('PIX', { amount: 9_990 }); // left pending
    const refunded = await sale('CREDIT_CARD', { amount: 250_000 });
    expect(refunded.status).toBe('PAGO');
    await refund(refunded.id, {});
    const disputed = await sale('CREDIT_CARD', { amount: 75_000 });
    await event(disputed.id, 'CHARGEBACK_OPENED');
    await event(disputed.id, 'CHARGEBACK_CONFIRMED');
    const opened = await sale('CREDIT_CARD', { amount: 33_300 });
    await event(opened.id, 'CHARGEBACK_OPENED');
    expect((await sale('CREDIT_CARD', { amount: 1_000, card: card('4000000000000002') })).status).toBe('RECUSADO');
    await sale('DEBIT_CARD', { amount: 3_000 });
    const boleto = await sale('BOLETO', { amount: 150_000 });
    await event(boleto.id, 'PAYMENT_CONFIRMED');
    const transfer = await sale('TRANSFER', { amount: 200_000 });
    await event(transfer.id, 'PAYMENT_CONFIRMED');
    const subscribed = await sale('CREDIT_CARD', { amount: 4_990, subscription: { enabled: true, billingCycle: 'MONTHLY' } });
    expect(subscribed.subscription).toBeTruthy();
    const yearly = await sale('CREDIT_CARD', { amount: 129_900, subscription: { enabled: true, billingCycle: 'YEARLY' } });
    await s.t.http.post(`/api/subscriptions/${(yearly.subscription as { id: number }).id}/pause`).set(seller.headers).expect(200);
    const pixPlan = await sale('PIX', { amount: 1_990, subscription: { enabled: true, billingCycle: 'MONTHLY' } });
    await event(pixPlan.id, 'PAYMENT_CONFIRMED');

    const cashout = async (body: Record<string, unknown>) => (await s.t.http.post('/api/public/cashout').set(seller.headers).send(body).expect(201)).body as { id: number };
    const cashoutEvent = (id: number, name: string) => s.t.http.post(`/api/sandbox/cashouts/${id}/events`).set(seller.headers).send({ event: name }).expect(200);
    await s.t.http.post(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).send({ url: `${receiver.url}/withdrawals`, type: 'WITHDRAWAL' }).expect(201);
    const completed = await cashout({ amount: 10_000, pixKey: '52998224725' });
    await cashoutEvent(completed.id, 'PROCESSING');
    await cashoutEvent(completed.id, 'COMPLETED');
    const rejected = await cashout({ amount: 999.99, pixKey: '+5511987654321', pixKeyType: 'PHONE' });
    await cashoutEvent(rejected.id, 'PROCESSING');
    await cashoutEvent(rejected.id, 'REJECTED');
    const cancelled = await cashout({ amount: 1_500.5, pixKey: 'financeiro.loja@empresa-de-exemplo.com.br', pixKeyType: 'EMAIL' });
    await cashoutEvent(cancelled.id, 'CANCELLED');
    await cashout({ amount: 250.75, pixKey: '123e4567-e89b-42d3-a456-426614174000', pixKeyType: 'RANDOM' });

    // The postbacks of all those moves reached the seller's endpoint: the deliveries page has real rows.
    await receiver.waitFor((received) => received.length >= 20, 20_000);
    await eventually(
      async () => Number((await s.t.db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND status <> 'DELIVERED'`, [seller.id]))[0].n),
      (n) => n === 0,
      'every postback delivered',
    );
    return seller;
  }

  it('shows every amount and status without a horizontal scroll on the statement, sales, subscriptions, withdrawals and deliveries pages', async () => {
    const seller = await sellerWithEverything();
    const seen: string[] = [];
    const wrong: Array<Record<string, unknown>> = [];
    for (const { name: screen, viewport } of WIDTHS) {
      const context = await newContext(s.browser, { mobile: viewport.width < 720 });
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      await signIn(s.t, page, emailOf(seller), PASSWORD);
      for (const { name, path, minAmounts } of PAGES) {
        await page.goto(`${s.t.baseUrl}${path}`);
        await screenshot(page, `layout-${name}-${screen}-${viewport.width}`);
        const layout = await layoutOf(page);
        const where = `${name} at ${viewport.width} px`;
        seen.push(`${where}: ${layout.rows} rows, ${layout.amounts} amounts, ${layout.statuses} statuses`);
        // Real rows with their amounts and statuses; the document never scrolls sideways, no table scrolls inside
        // its box, and every amount and status is on screen. Every page and width is checked before failing.
        const found = {
          where,
          innerWidth: layout.innerWidth,
          rows: layout.rows >= 3,
          amounts: layout.amounts >= minAmounts,
          statuses: name === 'statement' || layout.statuses === layout.rows,
          overflow: Math.max(0, layout.scrollWidth - layout.innerWidth),
          scrollingTables: layout.scrollingTables,
          problems: layout.problems.slice(0, 3),
        };
        const expected = { where, innerWidth: viewport.width, rows: true, amounts: true, statuses: true, overflow: 0, scrollingTables: 0, problems: [] };
        if (JSON.stringify(found) !== JSON.stringify(expected)) wrong.push({ ...found, problemCount: layout.problems.length });
      }
      await context.close();
    }
    expect(wrong).toEqual([]);
    expect(seen).toHaveLength(WIDTHS.length * PAGES.length);

    // Between a phone and a laptop (a tablet, 820 px) the statement's seven columns do not fit: the table scrolls
    // inside its box, the document does not, and a caption above the table says it scrolls.
    const tablet = await newContext(s.browser);
    const page = await tablet.newPage();
    await page.setViewportSize({ width: 820, height: 1180 });
    await signIn(s.t, page, emailOf(seller), PASSWORD);
    await page.goto(`${s.t.baseUrl}/dashboard/statement`);
    await screenshot(page, 'layout-statement-tablet-820');
    const layout = await layoutOf(page);
    expect({ overflow: Math.max(0, layout.scrollWidth - layout.innerWidth), scrollingTables: layout.scrollingTables, hints: layout.hints }).toEqual({
      overflow: 0,
      scrollingTables: 1,
      hints: ['"Deslize a tabela para o lado para ver todas as colunas →"'],
    });
    await tablet.close();
  });
});
