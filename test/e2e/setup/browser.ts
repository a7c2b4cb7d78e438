import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Locator, Page } from 'playwright-core';
import { createSeller, TestSeller } from './factories';
import { startApp, TestApp } from './test-app';

/** Debian's chromium (installed by .ci/run when missing); no browser is downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
/** Test outputs (gitignored): one screenshot per page the tests visit. */
export const SCREENSHOTS_DIR = join(__dirname, '..', '..', 'screenshots');

export const PASSWORD = 'senha-forte-123';

/** The real app listening on a free port, for a real browser. */
export interface DashboardApp extends TestApp {
  baseUrl: string;
}

export async function startDashboardApp(env: Record<string, string | undefined> = {}): Promise<DashboardApp> {
  // TRUST_PROXY lets each test sign in from an address of its own (X-Forwarded-For), so the per-address
  // sign-in limit of one test never blocks another.
  const t = await startApp({ TRUST_PROXY: 'loopback', ...env });
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  return { ...t, baseUrl: `http://127.0.0.1:${port}` };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** A browser context (its own cookies) that comes from an address of its own, on a phone-sized or desktop screen. */
export async function newContext(browser: Browser, options: { mobile?: boolean } = {}): Promise<BrowserContext> {
  const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  const context = await browser.newContext({
    viewport: options.mobile ? { width: 390, height: 844 } : { width: 1280, height: 900 },
    extraHTTPHeaders: { 'X-Forwarded-For': address },
    locale: 'pt-BR',
  });
  context.setDefaultTimeout(10_000);
  return context;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  if (!existsSync(SCREENSHOTS_DIR)) mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** The invitation link's path on this app (the link's origin is DASHBOARD_BASE_URL, not the test's port). */
export function invitationPathOf(seller: TestSeller): string {
  return new URL((seller.body.invitation as { url: string }).url).pathname;
}

/** A new seller whose user has accepted its invitation and is signed in on `page`. */
export async function signedInSeller(t: DashboardApp, page: Page, overrides: Record<string, unknown> = {}): Promise<TestSeller> {
  const seller = await createSeller(t, overrides);
  await page.goto(`${t.baseUrl}${invitationPathOf(seller)}`);
  await page.getByLabel('Nova senha', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Confirme a nova senha').fill(PASSWORD);
  await submit(page, 'Salvar senha e entrar');
  if (page.url() !== `${t.baseUrl}/dashboard`) throw new Error(`invitation not accepted: at ${page.url()}`);
  return seller;
}

/** Signs in through the form. */
export async function signIn(t: DashboardApp, page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${t.baseUrl}/dashboard/login`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Senha', { exact: true }).fill(password);
  await submit(page, 'Entrar');
}

/** Clicks a form's submit button (by its name, or a locator) and waits for the page it leads to. */
export async function submit(page: Page, button: string | Locator): Promise<void> {
  const target = typeof button === 'string' ? page.getByRole('button', { name: button, exact: true }) : button;
  await Promise.all([page.waitForEvent('load'), target.click()]);
}

/** The visible text of the first element matching `selector`. */
export async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().innerText()).trim();
}

/** The seller's user e-mail (spec 2.9 user.email). */
export function emailOf(seller: TestSeller): string {
  return (seller.body.seller as { user: { email: string } }).user.email;
}

/** What every dashboard test file works with: one app and one browser per file, a fresh context and page per test. */
export interface DashboardSession {
  t: DashboardApp;
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/** Registers the file's hooks that start and close the app, the browser and each test's context. */
export function useDashboardSession(env: Record<string, string | undefined> = {}): DashboardSession {
  const session = {} as DashboardSession;
  beforeAll(async () => {
    session.t = await startDashboardApp(env);
    session.browser = await launchBrowser();
  });
  afterAll(async () => {
    await session.browser?.close();
    await session.t?.close();
  });
  beforeEach(async () => {
    session.context = await newContext(session.browser);
    session.page = await session.context.newPage();
  });
  afterEach(() => session.context.close());
  return session;
}
