import { adminHeaders, createSeller } from './setup/factories';
import { createHash } from 'node:crypto';
import { emailOf, invitationPathOf, newContext, PASSWORD, screenshot, signedInSeller, signIn, submit, textOf, useDashboardSession } from './setup/browser';

describe('Dashboard sign-in (issue 12), in a real browser', () => {
  const s = useDashboardSession({ LOGIN_MAX_ATTEMPTS_PER_ACCOUNT: '3', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '6' });

  it('signs in through the invitation link of the operator API, which works once, then by e-mail and password', async () => {
    const seller = await createSeller(s.t);
    const invitation = seller.body.invitation as { url: string; expiresAt: string };
    expect(invitation.url).toMatch(/^http:\/\/localhost:3000\/dashboard\/invitation\/[A-Za-z0-9_-]{43}$/);
    const hoursValid = (Date.parse(invitation.expiresAt) - Date.now()) / 3_600_000;
    expect(hoursValid).toBeGreaterThan(71.9);
    expect(hoursValid).toBeLessThanOrEqual(72);

    await s.page.goto(`${s.t.baseUrl}${invitationPathOf(seller)}`);
    await screenshot(s.page, 'invitation');
    await s.page.getByLabel('Nova senha', { exact: true }).fill('curta');
    await s.page.getByLabel('Confirme a nova senha').fill('curta');
    await submit(s.page, 'Salvar senha e entrar');
    expect(await textOf(s.page, '#password-erro')).toBe('A senha precisa ter pelo menos 10 caracteres.');
    expect(await s.page.getByLabel('Nova senha', { exact: true }).getAttribute('aria-invalid')).toBe('true');

    await s.page.getByLabel('Nova senha', { exact: true }).fill(PASSWORD);
    await s.page.getByLabel('Confirme a nova senha').fill(PASSWORD);
    await submit(s.page, 'Salvar senha e entrar');
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard`);
    expect(await textOf(s.page, 'h1')).toBe('Visão geral');
    expect(await textOf(s.page, '[data-testid=balance-available]')).toBe('R$ 0,00');
    await screenshot(s.page, 'overview');

    const [cookie] = (await s.context.cookies()).filter((c) => c.name === 'gw_dashboard');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/dashboard' });
    const stored = await s.t.db.query(`SELECT count(*)::int AS n FROM dashboard_sessions WHERE sess::text LIKE $1`, [`%"sellerId":${seller.id}%`]);
    expect(stored[0].n).toBe(1);

    // The link was good once.
    const reused = await s.page.goto(`${s.t.baseUrl}${invitationPathOf(seller)}`);
    expect(reused?.status()).toBe(404);

    // Sign out, then back in with the password.
    await s.page.goto(`${s.t.baseUrl}/dashboard`);
    await s.page.getByText('Loja Teste').click();
    await submit(s.page, 'Sair');
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
    expect((await s.page.goto(`${s.t.baseUrl}/dashboard`))?.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
    await screenshot(s.page, 'login');
    await signIn(s.t, s.page, emailOf(seller).toUpperCase(), PASSWORD);
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard`);
  });

  it('stores the password as an argon2id hash and the invitation token only as its SHA-256', async () => {
    const seller = await createSeller(s.t);
    const token = invitationPathOf(seller).split('/').pop() as string;
    const [invitation] = await s.t.db.query(
      `SELECT i.token_hash FROM seller_invitations i JOIN seller_users u ON u.id = i.user_id WHERE u.seller_id = $1`,
      [seller.id],
    );
    expect(invitation.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    await signedInSeller(s.t, s.page).then(async (other) => {
      const [user] = await s.t.db.query('SELECT password_hash FROM seller_users WHERE seller_id = $1', [other.id]);
      expect(user.password_hash).toMatch(/^\$argon2id\$/);
      expect(user.password_hash).not.toContain(PASSWORD);
    });
  });

  it('shows a wrong password next to the field and limits wrong passwords per account', async () => {
    const seller = await signedInSeller(s.t, s.page);
    const email = emailOf(seller);
    await s.context.clearCookies();
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await signIn(s.t, s.page, email, 'senha-errada-000');
      expect(await textOf(s.page, '#password-erro')).toBe('E-mail ou senha incorretos.');
    }
    await screenshot(s.page, 'login-wrong-password');
    // The fourth try is refused even with the right password, from another address too.
    const elsewhere = await newContext(s.browser);
    const other = await elsewhere.newPage();
    await signIn(s.t, other, email, PASSWORD);
    expect(await textOf(other, '[role=alert]')).toContain('Muitas tentativas de entrar');
    expect(other.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
    await screenshot(other, 'login-limited');
    await elsewhere.close();
  });

  it('limits wrong passwords per address, whichever account they try', async () => {
    const emails = [];
    for (let i = 0; i < 3; i += 1) emails.push(emailOf(await createSeller(s.t)));
    // Six failures from this address over three accounts (two each: no account reaches its own limit of 3).
    for (const email of [...emails, ...emails]) {
      await signIn(s.t, s.page, email, 'senha-errada-000');
      expect(await textOf(s.page, '#password-erro')).toBe('E-mail ou senha incorretos.');
    }
    await signIn(s.t, s.page, emails[0], 'senha-errada-000');
    expect(await textOf(s.page, '[role=alert]')).toContain('Muitas tentativas de entrar');
  });

  it("ends a blocked seller's session at its next request and refuses its sign-in", async () => {
    const seller = await signedInSeller(s.t, s.page);
    await s.t.http.patch(`/admin/sellers/${seller.id}`).set(adminHeaders).send({ blocked: true }).expect(200);
    await s.page.goto(`${s.t.baseUrl}/dashboard/sales`);
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
    await signIn(s.t, s.page, emailOf(seller), PASSWORD);
    expect(await textOf(s.page, '[role=alert]')).toBe('Esta conta está bloqueada. Fale com o suporte.');
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
  });

  it("marks the sign-in form's cookie Secure when the request came over HTTPS (through the trusted proxy), and answers unknown pages in HTML", async () => {
    // The session cookie's own Secure mark, set at sign-in, is checked in dashboard-sessions.e2e-spec.ts.
    const overHttps = await s.t.http.get('/dashboard/login').set('X-Forwarded-Proto', 'https').expect(200);
    expect(String(overHttps.headers['set-cookie'])).toMatch(/^gw_csrf=.*; Path=\/dashboard; HttpOnly; Secure; SameSite=Lax$/);
    const overHttp = await s.t.http.get('/dashboard/login').expect(200);
    expect(String(overHttp.headers['set-cookie'])).not.toContain('Secure');
    expect(overHttp.headers['content-security-policy']).toContain("script-src 'self'");
    const unknown = await s.t.http.get('/dashboard/nao-existe').expect(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.text).toContain('Página não encontrada');
  });

  it("refuses a form without its CSRF token, accepts it with the token, and the password change ends the user's other sessions", async () => {
    const seller = await signedInSeller(s.t, s.page);
    const refused = await s.page.request.post(`${s.t.baseUrl}/dashboard/account/password`, {
      form: { currentPassword: PASSWORD, newPassword: 'outra-senha-456', newPasswordConfirmation: 'outra-senha-456' },
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('Formulário expirado');
    const wrongToken = await s.page.request.post(`${s.t.baseUrl}/dashboard/account/password`, {
      form: { _csrf: 'x'.repeat(43), currentPassword: PASSWORD, newPassword: 'outra-senha-456', newPasswordConfirmation: 'outra-senha-456' },
    });
    expect(wrongToken.status()).toBe(403);

    // A second s.browser signed in as the same user: the password change ends its session.
    const elsewhere = await newContext(s.browser);
    const other = await elsewhere.newPage();
    await signIn(s.t, other, emailOf(seller), PASSWORD);
    expect(other.url()).toBe(`${s.t.baseUrl}/dashboard`);

    // Through the s.page (with its token) the change goes through, and the new password is the one that works.
    await s.page.goto(`${s.t.baseUrl}/dashboard/account/password`);
    await s.page.getByLabel('Senha atual').fill('nao-e-a-senha');
    await s.page.getByLabel('Nova senha', { exact: true }).fill('outra-senha-456');
    await s.page.getByLabel('Confirme a nova senha').fill('outra-senha-456');
    await submit(s.page, 'Trocar senha');
    expect(await textOf(s.page, '#currentPassword-erro')).toBe('A senha atual não confere.');
    await s.page.getByLabel('Senha atual').fill(PASSWORD);
    await s.page.getByLabel('Nova senha', { exact: true }).fill('outra-senha-456');
    await s.page.getByLabel('Confirme a nova senha').fill('outra-senha-456');
    await submit(s.page, 'Trocar senha');
    expect(await textOf(s.page, '[role=status]')).toBe('Senha alterada.');
    await screenshot(s.page, 'password');
    await s.page.goto(`${s.t.baseUrl}/dashboard/sales`);
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard/sales`);
    await other.goto(`${s.t.baseUrl}/dashboard/sales`);
    expect(other.url()).toBe(`${s.t.baseUrl}/dashboard/login`);
    await elsewhere.close();

    await s.context.clearCookies();
    const email = emailOf(seller);
    await signIn(s.t, s.page, email, PASSWORD);
    expect(await textOf(s.page, '#password-erro')).toBe('E-mail ou senha incorretos.');
    await signIn(s.t, s.page, email, 'outra-senha-456');
    expect(s.page.url()).toBe(`${s.t.baseUrl}/dashboard`);
  });
});
