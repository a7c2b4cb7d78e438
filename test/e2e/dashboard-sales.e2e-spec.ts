import { Page } from 'playwright-core';
import { cents, centsToBrl } from '../../src/domain/money';
import { createSeller } from './setup/factories';
import { createSale, customer, saleBody, sendEvent } from './setup/sales';
import { newContext, screenshot, signedInSeller, submit, textOf, useDashboardSession } from './setup/browser';

async function rows(page: Page): Promise<string[]> {
  return page.locator('table tbody tr td:first-child').allInnerTexts();
}

describe('Dashboard overview and sales (issue 12), in a real browser', () => {
  const s = useDashboardSession();

  it('shows the balance, revenue, the 30-day chart and the latest sales of sales made through the API', async () => {
    const seller = await signedInSeller(s.t, s.page);
    const pix = await createSale(s.t, seller, saleBody('PIX', { amount: 12345 }));
    await sendEvent(s.t, seller, pix.id, 'PAYMENT_CONFIRMED').then((r) => expect(r.status).toBe(200));
    const card = await createSale(s.t, seller, saleBody('CREDIT_CARD', { amount: 20000 }));
    expect(card.status).toBe('PAGO');
    const balance = (await s.t.http.get('/api/public/balance').set(seller.headers).expect(200)).body;
    expect(balance.available).toBeGreaterThan(0);

    await s.page.goto(`${s.t.baseUrl}/dashboard`);
    expect(await textOf(s.page, '[data-testid=balance-available]')).toBe(centsToBrl(cents(balance.available)));
    expect(await textOf(s.page, '[data-testid=balance-blocked]')).toBe(centsToBrl(cents(balance.blocked)));
    expect(await textOf(s.page, '[data-testid=balance-total]')).toBe(centsToBrl(cents(balance.total)));
    expect(await textOf(s.page, '[data-testid=revenue-total]')).toBe('R$ 323,45');
    expect(await textOf(s.page, '[data-testid=paid-30]')).toBe('R$ 323,45');
    expect(await s.page.locator('[data-testid=paid-chart] rect.bar').count()).toBe(30);
    const tallest = await s.page.locator('[data-testid=paid-chart] rect.bar').last().getAttribute('height');
    expect(Number(tallest)).toBeGreaterThan(0);
    expect(await rows(s.page)).toEqual([`#${card.id}`, `#${pix.id}`]);
    await screenshot(s.page, 'overview-with-sales');
  });

  it("lists a sale created through the API, filters the list, and opens the sale's s.page with items, customer and status history", async () => {
    const seller = await signedInSeller(s.t, s.page);
    const pix = await createSale(s.t, seller, saleBody('PIX', { amount: 15000 }));
    await sendEvent(s.t, seller, pix.id, 'PAYMENT_CONFIRMED');
    const boleto = await createSale(s.t, seller, saleBody('BOLETO', { customer: { ...customer, name: 'Maria Souza', email: 'maria@example.com' } }));
    const card = await createSale(s.t, seller, saleBody('DEBIT_CARD'));

    await s.page.goto(`${s.t.baseUrl}/dashboard/sales`);
    expect(await rows(s.page)).toEqual([`#${card.id}`, `#${boleto.id}`, `#${pix.id}`]);
    await screenshot(s.page, 'sales');

    await s.page.getByLabel('Status').selectOption('PAGO');
    await submit(s.page, 'Filtrar');
    expect(await rows(s.page)).toEqual([`#${card.id}`, `#${pix.id}`]);
    await s.page.getByLabel('Status').selectOption('');
    await s.page.getByLabel('Meio de pagamento').selectOption('BOLETO');
    await submit(s.page, 'Filtrar');
    expect(await rows(s.page)).toEqual([`#${boleto.id}`]);
    await s.page.getByLabel('Meio de pagamento').selectOption('');
    await s.page.getByLabel(/^Cliente/).fill('maria');
    await submit(s.page, 'Filtrar');
    expect(await rows(s.page)).toEqual([`#${boleto.id}`]);

    const today = new Date(Date.now() - 3 * 3_600_000).toISOString().slice(0, 10);
    await s.page.goto(`${s.t.baseUrl}/dashboard/sales?startDate=${today}&endDate=${today}`);
    expect(await rows(s.page)).toHaveLength(3);
    const bad = await s.page.goto(`${s.t.baseUrl}/dashboard/sales?startDate=2026-13-01&status=NOPE`);
    expect(bad?.status()).toBe(200);
    expect(await textOf(s.page, '#startDate-erro')).toBe('startDate must be a date YYYY-MM-DD');
    expect(await textOf(s.page, '#status-erro')).toContain('status must be one of');

    await s.page.goto(`${s.t.baseUrl}/dashboard/sales`);
    await Promise.all([s.page.waitForEvent('load'), s.page.getByRole('link', { name: `#${pix.id}` }).click()]);
    expect(await textOf(s.page, 'h1')).toBe(`Venda #${pix.id} Pago`);
    expect(await textOf(s.page, '[data-testid=sale-amount]')).toBe('R$ 150,00');
    expect(await textOf(s.page, '[data-testid=customer-name]')).toBe(customer.name);
    expect(await s.page.locator('table tbody tr').first().innerText()).toContain('Curso online');
    expect(await s.page.locator('[data-testid=status-history] li').allInnerTexts()).toEqual([
      expect.stringMatching(/— Pendente$/),
      expect.stringMatching(/— Pendente → Pago$/),
    ]);
    await screenshot(s.page, 'sale');
  });

  it("answers 404 for another seller's sale, an unknown one and a malformed id", async () => {
    await signedInSeller(s.t, s.page);
    const other = await createSeller(s.t);
    const theirs = await createSale(s.t, other, saleBody('PIX'));
    for (const path of [`/dashboard/sales/${theirs.id}`, '/dashboard/sales/99999999', '/dashboard/sales/abc']) {
      const response = await s.page.goto(`${s.t.baseUrl}${path}`);
      expect(response?.status()).toBe(404);
      expect(await textOf(s.page, 'h1')).toBe('Página não encontrada');
    }
  });

  it('is usable on a phone', async () => {
    const phone = await newContext(s.browser, { mobile: true });
    const mobile = await phone.newPage();
    const seller = await signedInSeller(s.t, mobile);
    await createSale(s.t, seller, saleBody('PIX'));
    await mobile.goto(`${s.t.baseUrl}/dashboard/sales`);
    // Nothing wider than the screen: the s.page never scrolls sideways (wide tables scroll inside their own box).
    const overflow = await mobile.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(mobile, 'sales-phone');
    await phone.close();
  });
});

