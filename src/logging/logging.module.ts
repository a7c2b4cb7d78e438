import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from '../config/app-config';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

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
  const id = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/** JSON logs through pino, one line per request with its id. */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          genReqId: requestIdFor,
          redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
          customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
          autoLogging: { ignore: (req) => req.url === '/health' },
          // One short line per request: its id, method, URL and status (and the error, if any). Serializing
          // every header and redacting them cost more CPU than a balance read itself (issue 11's profile).
          serializers: {
            req: (req: { id: unknown; method: string; url: string; raw?: IncomingMessage }) => ({ id: req.id, method: req.method, url: req.url }),
            res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
          },
        },
      }),
    }),
  ],
})
export class LoggingModule {}
