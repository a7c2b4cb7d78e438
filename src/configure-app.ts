import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import helmet from 'helmet';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ExpressPlatformAdapter } from './common/http/express-platform.adapter';
import { ADMIN_TOKEN_SCHEME } from './common/decorators/admin-auth.decorator';
import { PRIVATE_KEY_SCHEME, PUBLIC_KEY_SCHEME } from './common/decorators/api-key-auth.decorator';
import { STATUS_BY_CODE } from './common/filters/error-status';
import { FallbackExceptionFilter, rendererForPath } from './common/filters/fallback-exception.filter';
import { AppValidationPipe } from './common/pipes/validation.pipe';
import { checkRequest, HEADER_LIMIT_BYTES, HEADER_PARSER_LIMIT_BYTES } from './common/middleware/request-body';
import { largeBodyAdmission } from './common/middleware/large-body-admission';
import { ApiKeysService } from './auth/api-keys.service';
import { AppModule } from './app.module';
import { ProviderAdapters, ProviderRegistry } from './providers/provider-registry';
import { AppConfig } from './config/app-config';
import { configureDashboard } from './dashboard/dashboard-http';
import { ApiDocumentStore, publicDocument } from './docs/api-documents';
import { DomainError } from './domain/domain-error';
import { mountRequestLog } from './logging/logging.module';
import { MetricsService } from './metrics/metrics.service';

/** The application as the service and the e2e tests run it: AppModule with everything configureApp adds. */
/**
 * The application as `npm start` serves it. `providers`: adapters of providers the embedding code brings
 * besides those of providers.module.ts (a test's), registered before the application starts.
 */
export async function createApp(options: { providers?: ProviderAdapters[] } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, new ExpressPlatformAdapter(), { bodyParser: false, bufferLogs: true });
  for (const adapters of options.providers ?? []) app.get(ProviderRegistry).add(adapters);
  return configureApp(app);
}

/**
 * How long a client may take to send its request line and headers. Well above what a real client on a
 * slow link needs for 16 KB; checked every CONNECTIONS_CHECK_MS (ExpressPlatformAdapter), so a slow
 * client is cut off within about 11 s.
 */
export const HEADERS_TIMEOUT_MS = 10_000;

/** The start of a request line, even cut short by the limit: its method and path. */
const REQUEST_LINE_START = /^[A-Z]+ (\/[^\s?]*)/;

/** The error body of a request that never reaches Express, in the shape of the family its path names. */
function rawErrorAnswer(error: DomainError, path: string): string {
  const status = STATUS_BY_CODE[error.code];
  const text = JSON.stringify(rendererForPath(path)({ error, status, requestId: randomUUID() }));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`
  );
}

/**
 * Requests Node answers by itself, before Express, with an empty body or none: a request line and headers
 * over HEADER_PARSER_LIMIT_BYTES or unparsable, CONNECT, an Expect other than 100-continue. They get JSON in the shape of the
 * family their path names (the general one when the request line could not be read), or go through.
 */
export function answerRequestsNodeWouldRefuse(app: NestExpressApplication): void {
  const server = app.getHttpServer();
  // Read by Node for each new connection. Requests over HEADER_LIMIT_BYTES and under this are refused by
  // checkRequest, which knows their path; only larger ones reach 'clientError' below.
  (server as { maxHeaderSize?: number }).maxHeaderSize = HEADER_PARSER_LIMIT_BYTES;
  // A client still sending its request line and headers after this is cut off (Node answers through
  // 'clientError'); Node's default, 60 s, let slow clients hold their buffers for a minute (issue 35 L2).
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const domainError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('HEADERS_TOO_LARGE', `The request line and headers must fit in ${HEADER_LIMIT_BYTES / 1024} KB`)
        : new DomainError('MALFORMED_REQUEST', 'The HTTP request could not be parsed');
    // The packet at hand starts the request only if it opens with a request line.
    const path = REQUEST_LINE_START.exec(error.rawPacket?.toString('latin1', 0, 2048) ?? '')?.[1] ?? '/';
    socket.end(rawErrorAnswer(domainError, path));
  });
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const path = (request.url ?? '/').split('?')[0];
    socket.end(rawErrorAnswer(new DomainError('NOT_FOUND', `Route not found: CONNECT ${path}`), path));
  });
  // An Expect this service does not know is ignored: the request is served as if it had none.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response));
}

/** Everything the running service and the e2e tests share on top of AppModule. */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.useLogger(app.get(Logger));
  // What was buffered while the modules started is written now, and nothing more is buffered: Nest flushes
  // only in listen(), which an app served through supertest never calls, so its lines would stay in memory.
  app.flushLogs();
  mountRequestLog(app);
  app.use(app.get(MetricsService).requestTimer());
  // Security headers (nosniff, frame denial, HSTS, no referrer…). The API answers JSON; the CSP is left to
  // the HTML pages: /docs, whose Swagger UI needs inline scripts, and /dashboard, which sets its own. No CORS: browsers must not call the
  // API with a seller's keys (spec §5), so no cross-origin access is granted.
  app.use(helmet({ contentSecurityPolicy: false }));
  answerRequestsNodeWouldRefuse(app);
  configureDashboard(app);
  app.useGlobalPipes(new AppValidationPipe());
  app.useGlobalFilters(new FallbackExceptionFilter());
  app.disable('x-powered-by');
  // No ETag: nothing here answers conditional requests, and Express hashed every response body for it.
  app.set('etag', false);
  // Behind a reverse proxy, the client address (rate limits per address) comes from X-Forwarded-For
  // only for the proxies TRUST_PROXY names.
  app.set('trust proxy', app.get(AppConfig).trustProxy);
  app.set('query parser', 'simple');
  app.enableShutdownHooks();

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Payment gateway API')
      .setDescription(
        'Sales by PIX, card, boleto and transfer; subscriptions; balance; seller account; cashouts to a PIX key. ' +
          'Every /api route needs both X-Api-Public-Key and X-Api-Private-Key. Amounts are integer cents, ' +
          'except cashout amounts and subscription metrics, which are reais.',
      )
      .setVersion('1')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Public-Key', description: 'pk_…' }, PUBLIC_KEY_SCHEME)
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Private-Key', description: 'sk_…' }, PRIVATE_KEY_SCHEME)
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Admin-Token', description: 'Operator token (ADMIN_TOKEN)' }, ADMIN_TOKEN_SCHEME)
      .build(),
  );
  // The public reference lists the operator API and the sandbox only outside production and while they
  // are on; in production the operator reads the whole document at /admin/docs-json, with the token.
  const config = app.get(AppConfig);
  app.get(ApiDocumentStore).set(document);
  const reach = { operator: !config.isProduction && config.adminToken !== null, sandbox: !config.isProduction && config.sandboxConfigured };
  SwaggerModule.setup('docs', app, publicDocument(document, reach), { jsonDocumentUrl: 'docs-json' });
  // Last of what is mounted here, so first of what the modules mount (the PSP's webhook reads the parsed
  // body) and before every route: /docs and the dashboard's static files are served before it.
  app.use(checkRequest(largeBodyAdmission(app.get(ApiKeysService), config)));
  return app;
}
