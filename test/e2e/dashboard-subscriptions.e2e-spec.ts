import { createSeller } from './setup/factories';
import { createSale, saleBody } from './setup/sales';
import { screenshot, signedInSeller, submit, textOf, useDashboardSession } from './setup/browser';

const monthly = { subscription: { enabled: true, billingCycle: 'MONTHLY' } };

describe('Dashboard subscriptions (issue 12), in a real browser', () => {
  const s = useDashboardSession();

  it("lists a subscription with the metrics, pauses and resumes it with the API's rules, then schedules its cancellation", async () => {
    const seller = await signedInSeller(s.t, s.page);
    const sale = await createSale(s.t, seller, saleBody('CREDIT_CARD', { amount: 4990, ...monthly }));
    const id = (sale.subscription as { id: number }).id;

    await s.page.goto(`${s.t.baseUrl}/dashboard/subscriptions`);
    expect(await s.page.locator('table tbody tr td:first-child').allInnerTexts()).toEqual([`#${id}`]);
    expect(await textOf(s.page, '[data-testid=metrics-active]')).toBe('1');
    expect(await textOf(s.page, '[data-testid=metrics-mrr]')).toBe('R$ 49,90');
    await screenshot(s.page, 'subscriptions');

    await Promise.all([s.page.waitForEvent('load'), s.page.getByRole('link', { name: `#${id}` }).click()]);
    expect(await textOf(s.page, 'h1')).toBe(`Assinatura #${id} Ativa`);
    await screenshot(s.page, 'subscription');
    const token = await s.page.locator('input[name=_csrf]').first().inputValue();

    await submit(s.page, 'Pausar');
    expect(await textOf(s.page, 'h1')).toBe(`Assinatura #${id} Pausada`);
    expect(await textOf(s.page, '[role=status]')).toContain('Assinatura pausada');
    expect((await s.t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data.status).toBe('PAUSED');

    // Pausing a paused subscription: the API's rule and message (ALREADY_PAUSED), on the s.page.
    const again = await s.page.request.post(`${s.t.baseUrl}/dashboard/subscriptions/${id}/pause`, { form: { _csrf: token } });
    expect(again.status()).toBe(400);
    const apiAnswer = await s.t.http.post(`/api/subscriptions/${id}/pause`).set(seller.headers).expect(400);
    expect(await again.text()).toContain(apiAnswer.body.error.message);

    await submit(s.page, 'Retomar');
    expect(await textOf(s.page, 'h1')).toBe(`Assinatura #${id} Ativa`);
    expect((await s.t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data.status).toBe('ACTIVE');

    await s.page.getByLabel('No fim do período atual').check();
    await s.page.getByLabel('Motivo (opcional)').fill('Cliente pediu');
    await submit(s.page, 'Cancelar assinatura');
    expect(await textOf(s.page, '[role=status]')).toBe('Cancelamento agendado para o fim do período atual.');
    const after = (await s.t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
    expect(after.status).toBe('ACTIVE');
    expect(after.scheduledCancellationDate).toBe(after.nextBillingDate);
  });

  it('shows a Pix Automático subscription with its authorization (issue 22)', async () => {
    const seller = await signedInSeller(s.t, s.page);
    const sale = await createSale(s.t, seller, saleBody('PIX', { amount: 2990, subscription: { enabled: true, billingCycle: 'MONTHLY', automaticPix: true } }));
    const id = (sale.subscription as { id: number }).id;
    await s.page.goto(`${s.t.baseUrl}/dashboard/subscriptions/${id}`);
    expect(await textOf(s.page, '[data-testid=automatic-pix-status]')).toBe('Aguardando o pagador');
    await s.t.http.post(`/api/sandbox/sales/${sale.id}/events`).set(seller.headers).send({ event: 'PAYMENT_CONFIRMED' }).expect(200);
    await s.page.reload();
    expect(await textOf(s.page, '[data-testid=automatic-pix-status]')).toBe('Autorizada');
    expect(await textOf(s.page, '[data-testid=automatic-pix]')).toContain('Cobradas automaticamente no vencimento');
    await screenshot(s.page, 'subscription-automatic-pix');
  });

  it("answers 404 for another seller's subscription and refuses to act on it", async () => {
    await signedInSeller(s.t, s.page);
    const other = await createSeller(s.t);
    const theirs = ((await createSale(s.t, other, saleBody('CREDIT_CARD', monthly))).subscription as { id: number }).id;
    expect((await s.page.goto(`${s.t.baseUrl}/dashboard/subscriptions/${theirs}`))?.status()).toBe(404);
    await s.page.goto(`${s.t.baseUrl}/dashboard/subscriptions`);
    const token = await s.page.locator('input[name=_csrf]').first().inputValue(); // the sign-out form's
    const refused = await s.page.request.post(`${s.t.baseUrl}/dashboard/subscriptions/${theirs}/cancel`, { form: { _csrf: token, when: 'now' } });
    expect(refused.status()).toBe(404);
    expect((await s.t.http.get(`/api/subscriptions/${theirs}`).set(other.headers).expect(200)).body.data.status).toBe('ACTIVE');
  });
});
