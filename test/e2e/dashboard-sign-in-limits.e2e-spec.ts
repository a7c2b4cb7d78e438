import { randomInt, randomUUID } from 'node:crypto';
import { DashboardApp, invitationPathOf, PASSWORD, startDashboardApp } from './setup/browser';
import { createSeller } from './setup/factories';

/**
 * Issue 19, finding 2: the dashboard's sign-in limit could be bypassed. Attempts were counted after the
 * argon2 check, so concurrent guesses were all verified; and the counter was keyed by the string typed
 * (JavaScript's toLowerCase) while PostgreSQL's lower(email) found the account, so `tİago@…` reached
 * `tiago@…` with a fresh counter. The password change had no limit. Over real HTTP, real concurrency.
 */
describe('Dashboard sign-in limits under concurrency and other spellings (issue 19)', () => {
  let t: DashboardApp;
  const PER_ACCOUNT = 5;

  beforeAll(async () => {
    t = await startDashboardApp({ LOGIN_MAX_ATTEMPTS_PER_ACCOUNT: String(PER_ACCOUNT), LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '100' });
  });
  afterAll(() => t.close());

  const newAddress = () => `10.${randomInt(0, 255)}.${randomInt(0, 255)}.${randomInt(1, 254)}`;

  /** A form page's session cookie and CSRF token, as a browser at `address` gets them. */
  async function openForm(path: string, address: string, cookie = ''): Promise<{ cookie: string; csrf: string }> {
    const page = await fetch(`${t.baseUrl}${path}`, { headers: { 'X-Forwarded-For': address, ...(cookie ? { Cookie: cookie } : {}) } });
    expect(page.status).toBe(200);
    const set = (page.headers.get('set-cookie') ?? '').split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
    if (!csrf) throw new Error(`no CSRF token on ${path}`);
    return { cookie: set || cookie, csrf };
  }

  async function postForm(path: string, address: string, form: { cookie: string; csrf: string }, fields: Record<string, string>): Promise<Response> {
    return fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': address, Cookie: form.cookie },
      body: new URLSearchParams({ _csrf: form.csrf, ...fields }).toString(),
    });
  }

  /** A seller whose user set PASSWORD through its invitation, with the e-mail given. */
  async function sellerWithPassword(email: string) {
    const seller = await createSeller(t, { email });
    const address = newAddress();
    const form = await openForm(invitationPathOf(seller), address);
    const accepted = await postForm(invitationPathOf(seller), address, form, { password: PASSWORD, passwordConfirmation: PASSWORD });
    expect(accepted.status).toBe(303);
    return seller;
  }

  /** Sign-in attempts sent at once, each from its own address and session: their statuses. */
  async function signInBurst(attempts: Array<{ email: string; password: string }>): Promise<number[]> {
    const prepared = await Promise.all(
      attempts.map(async (attempt) => {
        const address = newAddress();
        return { attempt, address, form: await openForm('/dashboard/login', address) };
      }),
    );
    const answers = await Promise.all(prepared.map(({ attempt, address, form }) => postForm('/dashboard/login', address, form, attempt)));
    return answers.map((answer) => answer.status);
  }

  it('verifies at most the per-account limit of 25 concurrent wrong guesses from 25 addresses; the rest are 429', async () => {
    const email = `loja-${randomUUID()}@example.com`;
    await sellerWithPassword(email);
    const statuses = await signInBurst(Array.from({ length: 25 }, () => ({ email, password: 'senha-errada-000' })));
    expect(statuses.filter((status) => status === 401)).toHaveLength(PER_ACCOUNT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25 - PER_ACCOUNT);
  });

  it('lets the right password through a burst of 19 wrong guesses only if it was among the first five counted', async () => {
    const email = `loja-${randomUUID()}@example.com`;
    await sellerWithPassword(email);
    const statuses = await signInBurst([...Array.from({ length: 19 }, () => ({ email, password: 'senha-errada-000' })), { email, password: PASSWORD }]);
    const verified = statuses.filter((status) => status === 401 || status === 303);
    expect(verified.length).toBeLessThanOrEqual(PER_ACCOUNT);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(20 - PER_ACCOUNT);
  });

  it('counts every spelling PostgreSQL matches to the account (upper case, a dotted capital I) against that account', async () => {
    const local = `tiago${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    const email = `${local}@example.com`;
    await sellerWithPassword(email);
    for (let i = 0; i < PER_ACCOUNT; i += 1) {
      const [status] = await signInBurst([{ email, password: 'senha-errada-000' }]);
      expect(status).toBe(401);
    }
    // Each spelling below is the same account for lower(email); with the right password, still refused.
    for (const spelling of [email.toUpperCase(), email.replace('i', 'İ'), `  ${email.replace('i', 'İ').toUpperCase()} `]) {
      expect(await signInBurst([{ email: spelling, password: PASSWORD }])).toEqual([429]);
    }
  });

  it('limits guesses of the current password on the password change form', async () => {
    const email = `loja-${randomUUID()}@example.com`;
    await sellerWithPassword(email);
    const address = newAddress();
    const login = await openForm('/dashboard/login', address);
    const signedIn = await postForm('/dashboard/login', address, login, { email, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    const session = (signedIn.headers.get('set-cookie') ?? login.cookie).split(';')[0];
    const statuses: number[] = [];
    for (let i = 0; i < PER_ACCOUNT + 2; i += 1) {
      const form = await openForm('/dashboard/account/password', address, session);
      const answer = await postForm('/dashboard/account/password', address, form, {
        currentPassword: 'senha-errada-000',
        newPassword: 'outra-senha-forte-1',
        newPasswordConfirmation: 'outra-senha-forte-1',
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([...Array(PER_ACCOUNT).fill(400), 429, 429]);
    // Even the right current password waits now.
    const form = await openForm('/dashboard/account/password', address, session);
    const right = await postForm('/dashboard/account/password', address, form, { currentPassword: PASSWORD, newPassword: 'outra-senha-forte-1', newPasswordConfirmation: 'outra-senha-forte-1' });
    expect(right.status).toBe(429);
  });
});
