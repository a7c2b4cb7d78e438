import { createHmac, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { NextFunction, Request, Response, urlencoded } from 'express';
import session from 'express-session';
import { NestExpressApplication } from '@nestjs/platform-express';
import nunjucks from 'nunjucks';
import { constantTimeEqual } from '../common/crypto/secrets';
import { AppConfig } from '../config/app-config';
import { requestShapeProblem } from '../domain/request-shape';
import { DashboardSessionStore, SESSION_IDLE_HOURS } from './session-store';
import { addViewFilters } from './view-filters';

export const DASHBOARD_PREFIX = '/dashboard';
export const VIEWS_DIR = join(__dirname, 'views');
const ASSETS_DIR = join(__dirname, 'assets');
const PICO_CSS_DIR = join(dirname(require.resolve('@picocss/pico/package.json')), 'css');

/** Name of the hidden field that carries the CSRF token in every dashboard form. */
export const CSRF_FIELD = '_csrf';

/** The cookie that binds the CSRF token of the forms shown before sign-in (sign-in, invitation); never a session. */
export const ANONYMOUS_CSRF_COOKIE = 'gw_csrf';
const ANONYMOUS_CSRF_VALUE = /^[A-Za-z0-9_-]{43}$/;

declare module 'express-session' {
  interface SessionData {
    csrfToken: string;
    userId: number;
    sellerId: number;
  }
}

/**
 * The dashboard's HTTP setup, before Nest's routes: nunjucks views, its CSS from the service itself (no
 * CDN), form bodies, sessions in PostgreSQL and the CSRF check of every form. Sessions and form bodies
 * exist only under /dashboard; the API stays stateless and JSON-only. A session is stored only once a
 * user signs in (startSession): what a visitor does before that (the sign-in and invitation pages, a 404,
 * a refused form) stores nothing, so anonymous traffic can neither fill the table nor the store's pool.
 */
export function configureDashboard(app: NestExpressApplication): void {
  const config = app.get(AppConfig);
  const environment = nunjucks.configure(VIEWS_DIR, { autoescape: true, express: app.getHttpAdapter().getInstance(), throwOnUndefined: false });
  addViewFilters(environment);
  app.setViewEngine('njk');
  app.useStaticAssets(PICO_CSS_DIR, { prefix: `${DASHBOARD_PREFIX}/assets/pico/`, maxAge: '1h', index: false });
  app.useStaticAssets(ASSETS_DIR, { prefix: `${DASHBOARD_PREFIX}/assets/`, maxAge: '1h', index: false });

  app.use(
    DASHBOARD_PREFIX,
    setPageHeaders,
    urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }),
    refuseMalformedForms,
    session({
      name: 'gw_dashboard',
      secret: config.sessionSecret,
      store: app.get(DashboardSessionStore).store,
      resave: false,
      // A session nothing was written into is never stored (and gets no cookie); only startSession writes.
      saveUninitialized: false,
      rolling: true,
      unset: 'destroy',
      // secure: 'auto' marks the cookie Secure whenever the request came over HTTPS (behind a proxy named by TRUST_PROXY).
      cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', path: DASHBOARD_PREFIX, maxAge: SESSION_IDLE_HOURS * 3_600_000 },
    }),
    csrfCheck(config.sessionSecret),
  );
  // A form body the parser refuses (too large, a bad charset): a page, not a stack of JSON.
  app.use(DASHBOARD_PREFIX, (error: { status?: number }, _request: Request, response: Response, next: NextFunction) => {
    if (response.headersSent) return next(error);
    const status = error.status === 413 ? 413 : 400;
    response.status(status).render('error', { title: 'Pedido inválido', message: status === 413 ? 'O formulário enviado é grande demais.' : 'O formulário enviado não pôde ser lido.' });
  });
}

/**
 * The headers of every dashboard page (the assets are served before, with their own): they load nothing
 * but their own files (no inline script, no third party, no framing), and no browser or shared cache
 * keeps them, since they show a seller's money, customers and keys, and carry CSRF tokens.
 */
function setPageHeaders(_request: Request, response: Response, next: NextFunction): void {
  response.setHeader(
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  );
  response.setHeader('Cache-Control', 'no-store');
  next();
}

/** Form fields PostgreSQL cannot store, or absurd shapes: a 400 page instead of an error deeper down. */
function refuseMalformedForms(request: Request, response: Response, next: NextFunction): void {
  const problem = requestShapeProblem(request.body) ?? requestShapeProblem(request.query);
  if (!problem) return next();
  response.status(400).render('error', { title: 'Pedido inválido', message: `O campo ${problem.field} tem um valor que não pode ser aceito.` });
}

/**
 * Every form carries a CSRF token, and any request that changes something (every method but GET and
 * HEAD) without the right one is refused with 403. Signed in, the token is the session's (a synchronizer
 * token, made by startSession). Before sign-in there is no session to hold one: the token is an HMAC,
 * under SESSION_SECRET, of a random value kept in an HttpOnly cookie of its own (a signed double-submit
 * cookie), so a page that shows the sign-in or invitation form, or any other, stores nothing.
 */
function csrfCheck(secret: string): (request: Request, response: Response, next: NextFunction) => void {
  return (request, response, next) => {
    const expected = request.session.userId ? sessionCsrfToken(request) : anonymousCsrfToken(request, response, secret);
    response.locals.csrfToken = expected;
    if (request.method === 'GET' || request.method === 'HEAD') return next();
    const sent = (request.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
    if (expected !== null && typeof sent === 'string' && constantTimeEqual(sent, expected)) return next();
    response.status(403).render('error', {
      title: 'Formulário expirado',
      message: 'Este formulário não pôde ser verificado (token de segurança ausente ou vencido). Volte, recarregue a página e envie de novo.',
    });
  };
}

/** A new random CSRF token (also the anonymous cookie's value). */
export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

function sessionCsrfToken(request: Request): string {
  request.session.csrfToken ??= newCsrfToken(); // a session signed in before tokens were made at sign-in
  return request.session.csrfToken;
}

/**
 * The token of a visitor's forms, from the value of its CSRF cookie. A page (GET) sets the cookie when the
 * browser has none; a post without it has no token that could match (null).
 */
function anonymousCsrfToken(request: Request, response: Response, secret: string): string | null {
  let value = cookieValue(request, ANONYMOUS_CSRF_COOKIE);
  if (value === null || !ANONYMOUS_CSRF_VALUE.test(value)) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    value = newCsrfToken();
    response.cookie(ANONYMOUS_CSRF_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: request.secure, path: DASHBOARD_PREFIX });
  }
  return createHmac('sha256', secret).update(`dashboard-csrf:${value}`).digest('base64url');
}

/** One cookie's value from the Cookie header (the dashboard has no cookie parser: express-session reads its own). */
function cookieValue(request: Request, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return null;
}
