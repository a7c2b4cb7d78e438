import { browserOf, cookiesSet, csrfOf, FORM_PASSWORD, newAddress, signedIn } from './setup/dashboard-forms';
import { createSeller } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

const PASSWORD = FORM_PASSWORD;

async function sessionRows(t: TestApp): Promise<number> {
  return (await t.db.query(`SELECT count(*)::int AS n FROM dashboard_sessions`))[0].n as number;
}

/**
 * Dashboard sessions (issue 19, point 6): nothing is stored for a visitor who has not signed in. The
 * sign-in and invitation forms carry a CSRF token bound to a cookie of their own (no stored session); a
 * session row exists only once a user has signed in.
 */
describe('Dashboard sessions', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => t.close());

  it('stores no session for anonymous pages: sign-in, an invitation, a 404, the redirect to sign-in', async () => {
    const seller = await createSeller(t);
    const invitation = new URL((seller.body.invitation as { url: string }).url).pathname;
    const before = await sessionRows(t);
    const answers = [];
    for (let i = 0; i < 5; i += 1) {
      answers.push(await t.http.get('/dashboard/login').expect(200));
      answers.push(await t.http.get(invitation).expect(200));
      answers.push(await t.http.get(`/dashboard/nao-existe-${i}`).expect(404));
      answers.push(await t.http.get('/dashboard/invitation/not-a-token').expect(404));
      answers.push(await t.http.get('/dashboard/sales').expect(303));
      answers.push(await t.http.post('/dashboard/login').type('form').send({ email: 'x@example.com', password: 'y' }).expect(403));
    }
    expect(await sessionRows(t)).toBe(before);
    for (const answer of answers) expect(cookiesSet(answer).gw_dashboard).toBeUndefined();
  });

  it("signs in with the form's token and its cookie, storing one session; a form without that cookie, or with another browser's token, is refused", async () => {
    const { seller, browser } = await signedIn(t);
    const email = (seller.body.seller as { user: { email: string } }).user.email;
    await browser.post('/dashboard/logout').type('form').send({ _csrf: csrfOf((await browser.get('/dashboard').expect(200)).text) }).expect(303);

    const visitor = browserOf(t);
    const page = await visitor.get('/dashboard/login').expect(200);
    expect(cookiesSet(page).gw_csrf).toMatch(/^gw_csrf=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Lax$/);
    const token = csrfOf(page.text);
    const before = await sessionRows(t);

    // The token without its cookie (a forged cross-site post), and another browser's token with this cookie.
    await t.http.post('/dashboard/login').type('form').send({ _csrf: token, email, password: PASSWORD }).expect(403);
    const otherToken = csrfOf((await browserOf(t).get('/dashboard/login').expect(200)).text);
    expect(otherToken).not.toBe(token);
    await visitor.post('/dashboard/login').type('form').send({ _csrf: otherToken, email, password: PASSWORD }).expect(403);
    expect(await sessionRows(t)).toBe(before);

    await visitor.post('/dashboard/login').type('form').send({ _csrf: token, email, password: 'nao-e-a-senha' }).expect(401);
    expect(await sessionRows(t)).toBe(before);
    const signedInAnswer = await visitor.post('/dashboard/login').type('form').send({ _csrf: token, email, password: PASSWORD }).expect(303).expect('Location', '/dashboard');
    expect(cookiesSet(signedInAnswer).gw_dashboard).toMatch(/^gw_dashboard=.*; Path=\/dashboard; Expires=.*; HttpOnly; SameSite=Lax$/);
    expect(await sessionRows(t)).toBe(before + 1);

    // Signed in, the forms carry the session's token: the sign-in cookie's token no longer opens them.
    const overview = await visitor.get('/dashboard').expect(200);
    expect(csrfOf(overview.text)).not.toBe(token);
    await visitor.post('/dashboard/logout').type('form').send({ _csrf: token }).expect(403);
    await visitor.post('/dashboard/logout').type('form').send({ _csrf: csrfOf(overview.text) }).expect(303);
    expect(await sessionRows(t)).toBe(before);
  });

  it('marks the sign-in cookie and the session cookie Secure when the request came over HTTPS (through the trusted proxy)', async () => {
    const seller = await createSeller(t);
    const overHttps = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': newAddress() };
    const path = new URL((seller.body.invitation as { url: string }).url).pathname;
    const form = await t.http.get(path).set(overHttps).expect(200);
    expect(cookiesSet(form).gw_csrf).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
    const cookie = cookiesSet(form).gw_csrf.split(';')[0];
    const accepted = await t.http
      .post(path)
      .set({ ...overHttps, Cookie: cookie })
      .type('form')
      .send({ _csrf: csrfOf(form.text), password: PASSWORD, passwordConfirmation: PASSWORD })
      .expect(303);
    expect(cookiesSet(accepted).gw_dashboard).toMatch(/^gw_dashboard=.*; Path=\/dashboard; Expires=.*; HttpOnly; Secure; SameSite=Lax$/);
  });
});

/** Smaller points of issue 19 (point 7) about signed-in pages. */
describe('Signed-in dashboard pages', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ TRUST_PROXY: 'loopback' });
  });
  afterAll(() => t.close());

  it('are never stored by a browser or a shared cache: Cache-Control: no-store on every page', async () => {
    const { browser } = await signedIn(t);
    for (const path of ['/dashboard', '/dashboard/sales', '/dashboard/subscriptions', '/dashboard/withdrawals', '/dashboard/withdrawals/new', '/dashboard/integrations/keys', '/dashboard/integrations/webhooks', '/dashboard/account/password']) {
      const page = await browser.get(path).expect(200);
      expect([path, page.headers['cache-control']]).toEqual([path, 'no-store']);
    }
    const missing = await browser.get('/dashboard/sales/999999999').expect(404);
    expect(missing.headers['cache-control']).toBe('no-store');
  });

  it("show only their own notices: ?notice=constructor (or any inherited name) shows none, a known one shows its text", async () => {
    const { browser } = await signedIn(t);
    for (const notice of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      for (const path of ['/dashboard/integrations/keys', '/dashboard/integrations/webhooks']) {
        const page = await browser.get(`${path}?notice=${notice}`).expect(200);
        expect([path, notice, page.text]).not.toEqual([path, notice, expect.stringMatching(/function|native code|\[object/)]);
        expect(page.text).not.toContain('role="status"');
      }
    }
    const revoked = await browser.get('/dashboard/integrations/keys?notice=revoked').expect(200);
    expect(revoked.text).toContain('Par de chaves revogado.');
  });
});

/** A transient database error while the guard reads the seller is a 503 page, not a sign-out (issue 19, point 7). */
describe('The dashboard guard when the database is busy', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ TRUST_PROXY: 'loopback', DB_POOL_SIZE: '1', DB_POOL_ACQUIRE_TIMEOUT_MS: '300' });
  });
  afterAll(() => t.close());

  it('answers 503 with Retry-After and keeps the session, which works again once a connection is free', async () => {
    const { seller, browser } = await signedIn(t);
    const sessionsOf = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM dashboard_sessions WHERE sess->>'sellerId' = $1`, [String(seller.id)]))[0].n as number;
    expect(await sessionsOf()).toBe(1);
    const holder = t.db.createQueryRunner();
    await holder.connect(); // the pool's only connection
    let busy;
    try {
      busy = await browser.get('/dashboard/sales');
    } finally {
      await holder.release();
    }
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.text).toContain('Algo deu errado');
    expect(await sessionsOf()).toBe(1);
    const again = await browser.get('/dashboard/sales').expect(200);
    expect(again.text).toContain('Vendas');
  });
});
