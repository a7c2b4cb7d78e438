import { maskPathSecrets } from '../common/path-secrets';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { NextFunction, Request, Response } from 'express';
import { Inject, INestApplication, Module, OnApplicationShutdown } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { Logger } from 'pino';
import { AppConfig } from '../config/app-config';
import { isLuhnValid } from '../domain/card';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Shapes of the secrets the gateway issues (private keys, postback secrets), wherever a client misplaces one. */
const SECRET_SHAPE = /(sk|whsec)_[A-Za-z0-9+/=_-]{8,}/g;
/** Runs of digits as long as a card number: masked when they pass the Luhn check. */
const DIGIT_RUN = /(?<!\d)\d{12,19}(?!\d)/g;
/**
 * Groups of digits joined by single spaces, dashes, plus signs (a URL's space), dots or underscores: a
 * card number as people write it (or as a form or a client joins it).
 */
const GROUPED_DIGITS = /\d+(?:[ +._-]\d+)+/g;
const GROUP_SEPARATOR = /[ +._-]/;
const REDACTED = '[redacted]';
/** Invitation tokens travel in the dashboard link's path. */
const INVITATION_PATH = /(\/dashboard\/invitation\/)[^/?#\s"]+/gi;

export type LogMask = (text: string) => string;

/**
 * Masks, in any text bound for a log line, what must never be there whatever header, path or query a
 * client put it in: the gateway's secret shapes, card numbers, dashboard invitation tokens, and the given
 * literal secrets (the admin token, the encryption keys).
 */
export function logMask(literals: Array<string | null | undefined>): LogMask {
  const secrets = literals.filter((literal): literal is string => typeof literal === 'string' && literal.length >= 8);
  return (text) => {
    let masked = text
      .replace(SECRET_SHAPE, REDACTED)
      .replace(DIGIT_RUN, (run) => (isLuhnValid(run) ? REDACTED : run))
      .replace(GROUPED_DIGITS, maskGroupedCard)
      .replace(INVITATION_PATH, `$1${REDACTED}`);
    for (const secret of secrets) if (masked.includes(secret)) masked = masked.split(secret).join(REDACTED);
    return masked;
  };
}

/**
 * Consecutive groups of a grouped run whose digits (12 to 19) pass the Luhn check are masked as one; the
 * other groups, and the separators between them, are kept ("12 5555 5555 5555 4444" is "12 [redacted]").
 */
function maskGroupedCard(run: string): string {
  const groups = run.split(GROUP_SEPARATOR);
  const separators = run.match(new RegExp(GROUP_SEPARATOR, 'g')) as string[];
  const masked = groups.map(() => false);
  for (let first = 0; first < groups.length; first += 1) {
    let digits = '';
    for (let last = first; last < groups.length && digits.length < 19; last += 1) {
      digits += groups[last];
      if (isLuhnValid(digits)) masked.fill(true, first, last + 1);
    }
  }
  if (!masked.includes(true)) return run;
  let out = '';
  groups.forEach((group, i) => {
    if (i > 0 && !(masked[i - 1] && masked[i])) out += separators[i - 1];
    if (!masked[i]) out += group;
    else if (i === 0 || !masked[i - 1]) out += REDACTED;
  });
  return out;
}

/** Percent-escapes decoded run by run; in a run that is not UTF-8, the ASCII escapes alone (the rest kept as sent). Never throws. */
function decodeLeniently(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%[0-7][0-9A-Fa-f]/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
    }
  });
}

/**
 * A URL masked both as sent and percent-decoded (`%73k_…` is `sk_…`, `%2573k_…` twice); the decoded form
 * is logged if it held something. Each escape is decoded on its own, so that one bad escape (`%E0%A4%A`)
 * cannot keep the rest of the URL from being decoded and checked.
 */
export function maskUrlForLog(url: string, mask: LogMask): string {
  let decoded = url;
  for (let round = 0; round < 3; round += 1) {
    const next = decodeLeniently(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  const maskedDecoded = mask(decoded);
  return maskedDecoded !== decoded || decoded === url ? maskedDecoded : mask(url);
}

/** The request id: the caller's X-Request-Id when it is sane and holds nothing to mask, else a new UUID; echoed in the response. */
export function requestIdFor(mask: LogMask): (request: IncomingMessage, response: ServerResponse) => string {
  return (request, response) => {
    const given = request.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) && mask(given) === given ? given : randomUUID();
    response.setHeader('X-Request-Id', id);
    return id;
  };
}

/** Paths that never reach a log line: keys, tokens, card data and secrets. */
export const REDACTED_PATHS = [
  'req.headers["x-api-private-key"]',
  'req.headers["x-admin-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
  'res.headers["set-cookie"]',
  'err.parameters',
  '*.card',
  '*.cvv',
  '*.privateKey',
  '*.postbackSecret',
];

type RequestLogMiddleware = (request: Request, response: Response, next: NextFunction) => void;

/** The root pino logger (Nest's Logger writes through it), the request-line middleware, and the write of what is pending. */
interface RequestLogging {
  root: Logger;
  middleware: RequestLogMiddleware;
  flush(): void;
}

const REQUEST_LOGGING = Symbol('REQUEST_LOGGING');

/**
 * One line per request when its response is sent or its connection closes: its id, method, masked URL,
 * status and response time, at warn for a 4xx and error for a 5xx. Readiness probes (`/health`) are
 * not logged. The request id is set on the request (the filters log it) and echoed in X-Request-Id.
 *
 * Written here rather than with pino-http: pino-http builds a child logger per request (serializing and
 * redacting its bindings) before the line is even due, and in issue 11's profile the request line cost
 * a quarter of a balance read's CPU. The line is built from masked strings only, so it is written
 * through a logger without redaction paths.
 */
export function requestLogMiddleware(lines: Logger, mask: LogMask): RequestLogMiddleware {
  const requestId = requestIdFor(mask);
  return (request, response, next) => {
    const started = Date.now();
    const id = requestId(request, response);
    (request as Request & { id: string }).id = id;
    let logged = false;
    const log = (): void => {
      if (logged) return;
      logged = true;
      const url = request.originalUrl ?? request.url;
      if (url === '/health') return;
      const status = response.statusCode;
      // The id was checked by requestIdFor and Node accepts only known method names: the URL is what a client can put anything in.
      const line = { req: { id, method: request.method, url: maskUrlForLog(url, mask) }, res: { statusCode: status }, responseTime: Date.now() - started };
      if (status >= 500) lines.error(line, 'request errored');
      else if (status >= 400) lines.warn(line, 'request completed');
      else lines.info(line, 'request completed');
    };
    response.once('finish', log);
    response.once('close', log);
    next();
  };
}

/**
 * The root logger's line formatter: the request path or URL a line names (the error filters log
 * `path: request.path` with a 5xx or a 503) is masked like the request line's URL, since a client can put
 * a card number, a private key or an invitation token in it.
 */
export function maskPathFields(mask: LogMask): (object: Record<string, unknown>) => Record<string, unknown> {
  return (object) => {
    const { path, url } = object;
    if (typeof path !== 'string' && typeof url !== 'string') return object;
    return {
      ...object,
      ...(typeof path === 'string' ? { path: maskUrlForLog(path, mask) } : {}),
      ...(typeof url === 'string' ? { url: maskUrlForLog(url, mask) } : {}),
    };
  };
}

/** Log lines pending before they are written together. */
const LOG_BUFFER_BYTES = 4096;
/** Longest a line waits to be written when fewer than LOG_BUFFER_BYTES are pending. */
const LOG_FLUSH_MS = 200;

/**
 * The written line with each of `literals` replaced by [redacted], whatever field or message carries it:
 * the last guard for a secret the service holds and some line might quote (the PSP webhook's path segment,
 * which the boot line, an error's message or a URL could carry). Letters, digits, - and _ only, so the
 * JSON line holds it as is.
 */
/** `line` as `masked` leaves it, then with every provider's notification path secret masked too. */
function maskSecretsInLine(masked: (line: string) => string): (line: string) => string {
  return (line) => maskPathSecrets(masked(line), REDACTED);
}

export function maskLiteralsInLine(literals: Array<string | null | undefined>): (line: string) => string {
  const secrets = literals.filter((literal): literal is string => typeof literal === 'string' && literal.length >= 8);
  return (line) => {
    let masked = line;
    for (const secret of secrets) if (masked.includes(secret)) masked = masked.split(secret).join(REDACTED);
    return masked;
  };
}

function createRequestLogging(config: AppConfig): RequestLogging {
  const { current, previous } = config.encryptionKeyring;
  const webhookSecret = config.apiPixWebhookSecret;
  const literals = logMask([config.adminToken, webhookSecret, ...[current, ...previous].map((key) => key.toString('hex'))]);
  // And every provider's notification path secret (src/common/path-secrets.ts), known once the intake starts.
  const mask: LogMask = (text) => maskPathSecrets(literals(text), REDACTED);
  // Written asynchronously and gathered: lines go out together once LOG_BUFFER_BYTES are pending, and at
  // least every LOG_FLUSH_MS, and when the application shuts down (below: Nest ends a SIGTERM by killing the
  // process with the signal again, which skips pino's own write at exit). The request line cost about
  // 20 us of a balance read's 110 (issue 24, measured by turning it off), and its own write, a thread-pool
  // write per line, was about half of that.
  const target = config.logFile ? { dest: config.logFile, append: true, mkdir: true } : { dest: 1 };
  const destination = pino.destination({ ...target, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
  const root = pino(
    { level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: REDACTED }, formatters: { log: maskPathFields(mask) }, hooks: { streamWrite: maskSecretsInLine(maskLiteralsInLine([webhookSecret])) } },
    destination,
  );
  const lines = pino({ level: config.logLevel }, destination);
  const flush = (): void => {
    try {
      destination.flushSync();
    } catch {
      // not open yet (nothing was written) or already closed
    }
  };
  return { root, middleware: requestLogMiddleware(lines, mask), flush };
}

/** Built once from the configuration, for the two users below; writes what is pending at shutdown. */
@Module({
  providers: [{ provide: REQUEST_LOGGING, inject: [AppConfig], useFactory: createRequestLogging }],
  exports: [REQUEST_LOGGING],
})
class RequestLoggingModule implements OnApplicationShutdown {
  constructor(@Inject(REQUEST_LOGGING) private readonly logging: RequestLogging) {}

  onApplicationShutdown(): void {
    this.logging.flush();
  }
}

/**
 * JSON logs through pino: one line per request with its id, and Nest's Logger writing to the same
 * destination (nestjs-pino's Logger).
 *
 * nestjs-pino's own request middleware is not mounted (`forRoutes: []`): it runs every request inside an
 * AsyncLocalStorage so that log lines written during the request carry its bindings, and on Node 20 an
 * active AsyncLocalStorage turns on promise hooks for every promise of the process. That cost about
 * 230 µs of CPU per request, more than a balance read's own work (issue 11's profile). Log lines
 * written while serving a request name what they need themselves: the filters log the request id, the
 * money paths the sale or withdrawal id.
 *
 * The request line's middleware is mounted by configureApp (`mountRequestLog`) before anything else, so
 * that every request gets its id and its line, including those answered or refused by what is mounted
 * with `app.use` (the dashboard's CSRF check, /docs) or by body parsing.
 */
@Module({
  imports: [
    RequestLoggingModule,
    LoggerModule.forRootAsync({
      imports: [RequestLoggingModule],
      inject: [REQUEST_LOGGING],
      useFactory: ({ root }: RequestLogging) => ({ pinoHttp: { logger: root }, forRoutes: [] }),
    }),
  ],
  exports: [RequestLoggingModule],
})
export class LoggingModule {}

/** The request line (requestLogMiddleware), first of everything the application runs for a request. */
export function mountRequestLog(app: INestApplication): void {
  app.use(app.get<RequestLogging>(REQUEST_LOGGING).middleware);
}
