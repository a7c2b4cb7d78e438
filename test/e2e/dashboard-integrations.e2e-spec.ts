import { Page } from 'playwright-core';
import { verifySignature } from '../../src/domain/postback-signature';
import { Receiver } from './setup/receiver';
import { rememberPostbackSecret } from './setup/standard-webhooks';
import { createSale, saleBody, sendEvent } from './setup/sales';
import { screenshot, signedInSeller, submit, textOf, useDashboardSession } from './setup/browser';

/** Fast relay, so that deliveries show up in the log within a test. */
const FAST = { OUTBOX_POLL_MS: '100', POSTBACK_RETRY_SCHEDULE_SECONDS: '0.2,0.2' };

/** Reloads the page until `check` holds (deliveries are made in the background), or fails after 10 s. */
async function reloadUntil(page: Page, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met on ${page.url()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await page.reload();
  }
}

describe('Dashboard integrations and withdrawals (issue 12), in a real browser', () => {
  const s = useDashboardSession(FAST);
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(() => receiver.close());

  /** A withdrawal of `amount` (as typed, "150,00") to a CPF key, requested through the dashboard's form: its id. */
  async function requestWithdrawal(amount: string): Promise<number> {
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals/new`);
    await s.page.getByLabel('Valor (R$)').fill(amount);
    await s.page.getByLabel('Tipo da chave PIX').selectOption('CPF');
    await s.page.getByLabel('Chave PIX', { exact: true }).fill('52998224725');
    await submit(s.page, 'Solicitar saque');
    return Number(/\/dashboard\/withdrawals\/(\d+)$/.exec(s.page.url())?.[1]);
  }

  it('generates a key pair shown once, which works on the API, shows its last use, and answers 401 once revoked', async () => {
    await signedInSeller(s.t, s.page);
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/keys`);
    expect(await s.page.locator('[data-testid=key-pairs] tbody tr').count()).toBe(1);
    await submit(s.page, 'Gerar um par de chaves');
    const publicKey = await textOf(s.page, '[data-testid=new-public-key]');
    const privateKey = await textOf(s.page, '[data-testid=new-private-key]');
    expect(publicKey).toMatch(/^pk_/);
    expect(privateKey).toMatch(/^sk_/);
    expect(await s.page.getByRole('button', { name: 'Copiar' }).isVisible()).toBe(true);
    await screenshot(s.page, 'keys-generated');

    const headers = { 'X-Api-Public-Key': publicKey, 'X-Api-Private-Key': privateKey };
    await s.t.http.get('/api/public/balance').set(headers).expect(200);
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/keys`);
    expect(await s.page.content()).not.toContain(privateKey);
    const row = s.page.locator('[data-testid=key-pairs] tbody tr', { hasText: publicKey });
    expect(await row.locator('td').nth(2).innerText()).not.toBe('Nunca');
    expect(await row.locator('td').nth(3).innerText()).toBe('Ativa');

    await Promise.all([s.page.waitForEvent('load'), s.page.getByRole('link', { name: `Revogar ${publicKey}` }).click()]);
    expect(await textOf(s.page, 'h1')).toBe('Revogar par de chaves?');
    await screenshot(s.page, 'keys-revoke');
    await submit(s.page, 'Sim, revogar');
    expect(await textOf(s.page, '[role=status]')).toContain('Par de chaves revogado');
    expect(await s.page.locator('[data-testid=key-pairs] tbody tr', { hasText: publicKey }).locator('td').nth(3).innerText()).toMatch(/^Revogada em/);
    await s.t.http.get('/api/public/balance').set(headers).expect(401);
  });

  it('adds a withdrawal webhook, requests a withdrawal, and shows its webhook delivered on the deliveries page, with a redelivery', async () => {
    const seller = await signedInSeller(s.t, s.page);
    const sale = await createSale(s.t, seller, saleBody('PIX', { amount: 50000 }));
    await sendEvent(s.t, seller, sale.id, 'PAYMENT_CONFIRMED');

    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/webhooks`);
    await s.page.getByLabel('URL (http ou https)').fill('ftp://nope');
    await submit(s.page, 'Adicionar webhook');
    expect(await textOf(s.page, '#url-erro')).toBe('url must be an http or https URL');
    await s.page.getByLabel('URL (http ou https)').fill(`${receiver.url}/saques`);
    await submit(s.page, 'Adicionar webhook');
    expect(await textOf(s.page, '[role=status]')).toBe('Webhook adicionado.');
    expect(await s.page.locator('[data-testid=webhooks] tbody tr').allInnerTexts()).toEqual([expect.stringContaining(`${receiver.url}/saques`)]);

    // The withdrawal, requested through the dashboard's form.
    const withdrawalId = await requestWithdrawal('150,00');
    expect(withdrawalId).toBeGreaterThan(0);

    // Driven by the payout provider (the sandbox).
    for (const event of ['PROCESSING', 'COMPLETED']) {
      await s.t.http.post(`/api/sandbox/cashouts/${withdrawalId}/events`).set(seller.headers).send({ event }).expect(200);
    }
    const received = await receiver.waitFor((r) => r.filter((x) => x.path === '/saques').length >= 2);
    expect(received.map((r) => r.body.status)).toEqual(['PROCESSING', 'COMPLETED']);

    // The deliveries page: the webhook's two events, delivered; the newest one's detail shows its single attempt.
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/deliveries?type=withdrawal.status_changed`);
    const rows = s.page.locator('[data-testid=events] tbody tr');
    await reloadUntil(s.page, async () => (await rows.locator('.status-delivered').count()) === 2);
    await screenshot(s.page, 'webhooks-deliveries');
    await Promise.all([s.page.waitForEvent('load'), rows.first().locator('td').first().getByRole('link').click()]);
    expect(await s.page.locator('[data-testid=attempts] tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^1\t.*HTTP 200/)]);

    await submit(s.page, 'Reenviar');
    expect(await textOf(s.page, '[role=status]')).toContain('Evento reenviado');
    await receiver.waitFor((r) => r.filter((x) => x.path === '/saques').length >= 3);
    await reloadUntil(s.page, async () => (await s.page.locator('[data-testid=attempts] tbody tr').count()) === 2);
    expect(receiver.received.filter((x) => x.path === '/saques').map((r) => r.body.status)).toEqual(['PROCESSING', 'COMPLETED', 'COMPLETED']);

    // The withdrawal's page: its status history.
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals/${withdrawalId}`);
    expect(await s.page.locator('[data-testid=status-history] li').allInnerTexts()).toEqual([
      expect.stringMatching(/— Pendente$/),
      expect.stringMatching(/— Pendente → Em processamento$/),
      expect.stringMatching(/— Em processamento → Concluído$/),
    ]);
    expect(await textOf(s.page, '[data-testid=withdrawal-amount]')).toBe('R$ 150,00');
    // The payout provider's id of the payout (a real PSP's: the Pix's end-to-end id).
    expect(await textOf(s.page, '[data-testid=withdrawal-payout-id]')).toMatch(/^sbx_po_/);
    await screenshot(s.page, 'withdrawal');

    // A withdrawal the provider rejects: its page says why, in the provider's words.
    const rejectedId = await requestWithdrawal('120,00');
    await s.t.http.post(`/api/sandbox/cashouts/${rejectedId}/events`).set(seller.headers).send({ event: 'REJECTED' }).expect(200);
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals/${rejectedId}`);
    expect(await textOf(s.page, '[data-testid=withdrawal-failure-reason]')).toBe('Rejected by the receiving bank (sandbox)');
  });

  it('sends a test event to a webhook, removes a webhook, and rotates the postback secret, shown once and used to sign', async () => {
    const seller = await signedInSeller(s.t, s.page);
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/webhooks`);
    await s.page.getByLabel('URL (http ou https)').fill(`${receiver.url}/teste`);
    await submit(s.page, 'Adicionar webhook');
    await submit(s.page, s.page.getByRole('button', { name: `Enviar teste para ${receiver.url}/teste` }));
    const test = (await receiver.waitFor((r) => r.some((x) => x.path === '/teste'))).find((x) => x.path === '/teste')!;
    expect(test.body).toMatchObject({ id: 0, userId: seller.id, type: 'WITHDRAWAL', test: true });

    await submit(s.page, s.page.getByRole('button', { name: `Remover ${receiver.url}/teste` }));
    expect(await textOf(s.page, '[role=status]')).toBe('Webhook removido.');
    expect(await s.page.locator('[data-testid=webhooks]').count()).toBe(0);

    await submit(s.page, 'Gerar novo segredo');
    const secret = await textOf(s.page, '[data-testid=postback-secret]');
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(seller.postbackSecret);
    rememberPostbackSecret(secret); // shown by the dashboard, not by an API answer: the suite's receivers verify with it too
    expect(await textOf(s.page, '[data-testid=previous-secret-window]')).toMatch(/^O segredo anterior continua assinando, junto com o novo, até \d{2}\/\d{2}\/\d{4}/);
    await s.page.goto(`${s.t.baseUrl}/dashboard/integrations/webhooks`);
    expect(await s.page.content()).not.toContain(secret);
    // Expired now (a leak): only the new secret signs from here on.
    await submit(s.page, 'Expirar o segredo anterior agora');
    expect(await textOf(s.page, '[role=status]')).toBe('O segredo anterior foi expirado: só o atual assina a partir de agora.');
    expect(await s.page.getByRole('button', { name: 'Expirar o segredo anterior agora' }).count()).toBe(0);
    await screenshot(s.page, 'webhooks-secret');
    const sale = await createSale(s.t, seller, saleBody('PIX', { postbackUrl: `${receiver.url}/postbacks` }));
    await sendEvent(s.t, seller, sale.id, 'PAYMENT_CONFIRMED');
    const postback = (await receiver.waitFor((r) => r.some((x) => x.path === '/postbacks'))).find((x) => x.path === '/postbacks')!;
    expect(verifySignature(secret, postback.rawBody, String(postback.headers['x-signature']), Math.floor(Date.now() / 1000))).toBe(true);
  });

  it("refuses a withdrawal the API would refuse, with the API's message next to its field, and lists the ones made", async () => {
    const seller = await signedInSeller(s.t, s.page);
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals/new`);
    const cases: Array<[string, string, string, string]> = [
      ['abc', '52998224725', '#amount-erro', 'Informe um valor em reais, como 150,00.'],
      ['50,00', '52998224725', '#amount-erro', 'The smallest cashout is 100.00 reais'],
      ['150,00', '52998224725', '#amount-erro', 'Available balance 0.00 is less than 150.00'],
      ['150,00', '123', '#pixKey-erro', 'pixKey must be 8 to 77 characters'],
    ];
    for (const [amount, pixKey, selector, message] of cases) {
      await s.page.getByLabel('Valor (R$)').fill(amount);
      await s.page.getByLabel('Chave PIX', { exact: true }).fill(pixKey);
      await submit(s.page, 'Solicitar saque');
      expect(await textOf(s.page, selector)).toBe(message);
      expect(await s.page.getByLabel('Valor (R$)').inputValue()).toBe(amount);
    }
    await screenshot(s.page, 'withdrawal-refused');

    const sale = await createSale(s.t, seller, saleBody('PIX', { amount: 30000 }));
    await sendEvent(s.t, seller, sale.id, 'PAYMENT_CONFIRMED');
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals/new`);
    await s.page.getByLabel('Valor (R$)').fill('120,50');
    await s.page.getByLabel('Chave PIX', { exact: true }).fill('52998224725');
    await submit(s.page, 'Solicitar saque');
    expect(await textOf(s.page, '[data-testid=withdrawal-amount]')).toBe('R$ 120,50');
    const balance = (await s.t.http.get('/api/public/balance').set(seller.headers).expect(200)).body;
    expect(balance.blocked).toBe(12050);
    await s.page.goto(`${s.t.baseUrl}/dashboard/withdrawals`);
    expect(await s.page.locator('table tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/R\$ 120,50.*Pendente/s)]);
    await screenshot(s.page, 'withdrawals');
  });
});
