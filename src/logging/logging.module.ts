import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Options } from 'pino-http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import { AppConfig } from '../config/app-config';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Shapes of the secrets the gateway issues (private keys, postback secrets), wherever a client misplaces one. */
const SECRET_SHAPE = /\b(sk|whsec)_[A-Za-z0-9_-]{8,}/g;

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

/** The request id: the caller's X-Request-Id when it is sane, else a new UUID; echoed in the response. */
export function requestIdFor(request: IncomingMessage, response: ServerResponse): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) && !given.match(SECRET_SHAPE) ? given : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * The logged request with every secret-shaped value masked: a private key sent in X-Api-Public-Key (the
 * two headers swapped), in Idempotency-Key or in a query string must not reach a log line either.
 */
export function maskMisplacedSecrets<T extends { url?: string; query?: unknown; headers?: Record<string, unknown> }>(request: T): T {
  const mask = (value: unknown): unknown =>
    typeof value === 'string'
      ? value.replace(SECRET_SHAPE, '[redacted]')
      : Array.isArray(value)
        ? value.map(mask)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, mask(inner)]))
          : value;
  return { ...request, url: mask(request.url), query: mask(request.query), headers: mask(request.headers) } as T;
}

/** JSON logs through pino, one line per request with its id. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const options = {
          level: config.logLevel,
          genReqId: requestIdFor,
          redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
          serializers: { req: maskMisplacedSecrets },
          customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
          autoLogging: { ignore: (req: IncomingMessage) => req.url === '/health' },
        } satisfies Options;
        return { pinoHttp: config.logFile ? [options, pino.destination({ dest: config.logFile, append: true, mkdir: true, sync: false })] : options };
      },
    }),
  ],
})
export class LoggingModule {}
