import { NextFunction, Request, Response, json } from 'express';
import helmet from 'helmet';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ADMIN_TOKEN_SCHEME } from './common/decorators/admin-auth.decorator';
import { PRIVATE_KEY_SCHEME, PUBLIC_KEY_SCHEME } from './common/decorators/api-key-auth.decorator';
import { FallbackExceptionFilter } from './common/filters/fallback-exception.filter';
import { toDomainError } from './common/filters/to-domain-error';
import { AppValidationPipe } from './common/pipes/validation.pipe';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { MetricsService } from './metrics/metrics.service';
import { RequestValidationError } from './domain/domain-error';
import { requestShapeProblem } from './domain/request-shape';

/** Largest JSON body accepted; larger ones get 413 in the family's error shape. */
export const BODY_LIMIT = '1mb';

/** The application as the service and the e2e tests run it: AppModule with everything configureApp adds. */
export async function createApp(): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, bufferLogs: true });
  return configureApp(app);
}

/**
 * Body parsing is ours rather than Nest's so that a malformed or oversized body becomes a DomainError
 * (MALFORMED_JSON, PAYLOAD_TOO_LARGE) that the fallback filter answers in the endpoint family's shape.
 */
function parseJsonBodies(app: NestExpressApplication): void {
  app.use(json({ limit: BODY_LIMIT }));
  // Before any transformation or validation: depth, array and string limits, and characters PostgreSQL
  // cannot store, in the body and the query (400 naming the field, in the family's shape).
  app.use((request: Request, _response: Response, next: NextFunction) => {
    const problem = requestShapeProblem(request.body) ?? requestShapeProblem(request.query);
    next(problem ? new RequestValidationError([], [problem]) : undefined);
  });
  app.use((error: unknown, _request: Request, _response: Response, next: NextFunction) => next(toDomainError(error) ?? error));
}

/** Everything the running service and the e2e tests share on top of AppModule. */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.useLogger(app.get(Logger));
  app.use(app.get(MetricsService).requestTimer());
  // Security headers (nosniff, frame denial, HSTS, no referrer…). The answers are JSON; the CSP is left to
  // the one HTML page (/docs), whose Swagger UI needs inline scripts. No CORS: browsers must not call the
  // API with a seller's keys (spec §5), so no cross-origin access is granted.
  app.use(helmet({ contentSecurityPolicy: false }));
  parseJsonBodies(app);
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
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  return app;
}
