import { randomInt } from 'node:crypto';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { createSeller, TestSeller } from './factories';
import { TestApp } from './test-app';

/** The dashboard without a browser: its forms posted through supertest, for tests about what the server stores and answers. */
export const FORM_PASSWORD = 'senha-forte-123';

/** The CSRF token of the first form of an HTML page. */
export function csrfOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no CSRF token in the page: ${html.slice(0, 300)}`);
  return token;
}

/** The cookies an answer sets, by name (value and attributes as sent). */
export function cookiesSet(response: { headers: Record<string, unknown> }): Record<string, string> {
  const raw = response.headers['set-cookie'];
  const lines = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  return Object.fromEntries(lines.map((line) => [line.split('=')[0], line]));
}

/** A client address of its own (the app must trust the loopback proxy: TRUST_PROXY=loopback). */
export function newAddress(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

/** A browser of its own (cookies kept), from an address of its own (the sign-in limit counts per address). */
export function browserOf(t: TestApp): TestAgent {
  return request.agent(t.app.getHttpServer()).set('X-Forwarded-For', newAddress());
}

/** A new seller whose user set its password through the invitation form, signed in on the returned browser. */
export async function signedIn(t: TestApp): Promise<{ seller: TestSeller; browser: TestAgent }> {
  const seller = await createSeller(t);
  const browser = browserOf(t);
  const path = new URL((seller.body.invitation as { url: string }).url).pathname;
  const form = await browser.get(path).expect(200);
  await browser
    .post(path)
    .type('form')
    .send({ _csrf: csrfOf(form.text), password: FORM_PASSWORD, passwordConfirmation: FORM_PASSWORD })
    .expect(303)
    .expect('Location', '/dashboard');
  return { seller, browser };
}

/** Posts a dashboard form as the signed-in `browser`, with the CSRF token of the page at `from`. */
export async function postForm(browser: TestAgent, from: string, action: string, fields: Record<string, string> = {}): Promise<request.Response> {
  const page = await browser.get(from).expect(200);
  return browser.post(action).type('form').send({ _csrf: csrfOf(page.text), ...fields });
}
