import { Browser, BrowserContext, Page } from 'playwright-core';
import { createSeller } from './setup/factories';
import { createSale, saleBody } from './setup/sales';
import { DashboardApp, launchBrowser, newContext, screenshot, signedInSeller, startDashboardApp, submit, textOf } from './setup/browser';

const monthly = { subscription: { enabled: true, billingCycle: 'MONTHLY' } };

describe('Dashboard subscriptions (issue 12), in a real browser', () => {
  let t: DashboardApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    t = await startDashboardApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });
  beforeEach(async () => {
    context = await newContext(browser);
    page = await context.newPage();
  });
  afterEach(() => context.close());

  it("lists a subscription with the metrics, pauses and resumes it with the API's rules, then schedules its cancellation", async () => {
    const seller = await signedInSeller(t, page);
    const sale = await createSale(t, seller, saleBody('CREDIT_CARD', { amount: 4990, ...monthly }));
    const id = (sale.subscription as { id: number }).id;

    await page.goto(`${t.baseUrl}/dashboard/subscriptions`);
    expect(await page.locator('table tbody tr td:first-child').allInnerTexts()).toEqual([`#${id}`]);
    expect(await textOf(page, '[data-testid=metrics-active]')).toBe('1');
    expect(await textOf(page, '[data-testid=metrics-mrr]')).toBe('R$ 49,90');
    await screenshot(page, 'subscriptions');

    await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name: `#${id}` }).click()]);
    expect(await textOf(page, 'h1')).toBe(`Assinatura #${id} Ativa`);
    await screenshot(page, 'subscription');
    const token = await page.locator('input[name=_csrf]').first().inputValue();

    await submit(page, 'Pausar');
    expect(await textOf(page, 'h1')).toBe(`Assinatura #${id} Pausada`);
    expect(await textOf(page, '[role=status]')).toContain('Assinatura pausada');
    expect((await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data.status).toBe('PAUSED');

    // Pausing a paused subscription: the API's rule and message (ALREADY_PAUSED), on the page.
    const again = await page.request.post(`${t.baseUrl}/dashboard/subscriptions/${id}/pause`, { form: { _csrf: token } });
    expect(again.status()).toBe(400);
    const apiAnswer = await t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).expect(400);
    expect(await again.text()).toContain(apiAnswer.body.error.message);

    await submit(page, 'Retomar');
    expect(await textOf(page, 'h1')).toBe(`Assinatura #${id} Ativa`);
    expect((await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data.status).toBe('ACTIVE');

    await page.getByLabel('No fim do período atual').check();
    await page.getByLabel('Motivo (opcional)').fill('Cliente pediu');
    await submit(page, 'Cancelar assinatura');
    expect(await textOf(page, '[role=status]')).toBe('Cancelamento agendado para o fim do período atual.');
    const after = (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
    expect(after.status).toBe('ACTIVE');
    expect(after.scheduledCancellationDate).toBe(after.nextBillingDate);
  });

  it("answers 404 for another seller's subscription and refuses to act on it", async () => {
    await signedInSeller(t, page);
    const other = await createSeller(t);
    const theirs = ((await createSale(t, other, saleBody('CREDIT_CARD', monthly))).subscription as { id: number }).id;
    expect((await page.goto(`${t.baseUrl}/dashboard/subscriptions/${theirs}`))?.status()).toBe(404);
    await page.goto(`${t.baseUrl}/dashboard/subscriptions`);
    const token = await page.locator('input[name=_csrf]').first().inputValue(); // the sign-out form's
    const refused = await page.request.post(`${t.baseUrl}/dashboard/subscriptions/${theirs}/cancel`, { form: { _csrf: token, when: 'now' } });
    expect(refused.status()).toBe(404);
    expect((await t.http.get(`/api/subscriptions/${theirs}`).set(other.headers).expect(200)).body.data.status).toBe('ACTIVE');
  });
});
