import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Options } from 'pino-http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import { AppConfig } from '../config/app-config';
import { isLuhnValid } from '../domain/card';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Shapes of the secrets the gateway issues (private keys, postback secrets), wherever a client misplaces one. */
const SECRET_SHAPE = /(sk|whsec)_[A-Za-z0-9_-]{8,}/g;
/** Runs of digits as long as a card number: masked when they pass the Luhn check. */
const DIGIT_RUN = /(?<!\d)\d{12,19}(?!\d)/g;
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
      .replace(INVITATION_PATH, `$1${REDACTED}`);
    for (const secret of secrets) if (masked.includes(secret)) masked = masked.split(secret).join(REDACTED);
    return masked;
  };
}

/** A URL masked both as sent and percent-decoded (`%73k_…` is `sk_…`); the decoded form is logged if it held something. */
function maskUrl(url: string, mask: LogMask): string {
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // a bad percent-encoding: masked as sent
  }
  const maskedDecoded = mask(decoded);
  return maskedDecoded === decoded ? mask(url) : maskedDecoded;
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

/**
 * The logged request with every string masked (headers, path, params, query): a private key sent in
 * X-Api-Public-Key (the two headers swapped), a card number as a path id, the admin token in a query
 * string must not reach a log line either.
 */
export function maskRequestForLog<T extends { url?: string }>(request: T, mask: LogMask): T {
  const deep = (value: unknown): unknown =>
    typeof value === 'string'
      ? mask(value)
      : Array.isArray(value)
        ? value.map(deep)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [mask(key), deep(inner)]))
          : value;
  // The route's params repeat the path, bare: a token in them has no shape to mask it by.
  const { params: _params, ...rest } = request as T & { params?: unknown };
  const masked = deep(rest) as T;
  return typeof request.url === 'string' ? { ...masked, url: maskUrl(request.url, mask) } : masked;
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

/** JSON logs through pino, one line per request with its id. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const { current, previous } = config.encryptionKeyring;
        const mask = logMask([config.adminToken, ...[current, ...previous].map((key) => key.toString('hex'))]);
        const options = {
          level: config.logLevel,
          genReqId: requestIdFor(mask),
          redact: { paths: REDACTED_PATHS, censor: REDACTED },
          customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
          autoLogging: { ignore: (req: IncomingMessage) => req.url === '/health' },
          // One short line per request: its id, method, masked URL and status (and the error, if any).
          // Serializing every header and redacting them cost more CPU than a balance read (issue 11's profile).
          serializers: {
            req: (req: { id: unknown; method: string; url: string }) => maskRequestForLog({ id: req.id, method: req.method, url: req.url }, mask),
            res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
          },
        } satisfies Options;
        return { pinoHttp: config.logFile ? [options, pino.destination({ dest: config.logFile, append: true, mkdir: true, sync: false })] : options };
      },
    }),
  ],
})
export class LoggingModule {}
