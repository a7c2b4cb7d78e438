import { Injectable, Logger, NestMiddleware } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { NotificationSource } from '../providers/notifications.port';
import { ProviderIntake } from './provider-intake.service';

/** Retry-After of a notification refused because its inbox is full. */
const INBOX_FULL_RETRY_AFTER_SECONDS = 60;

/**
 * POST on a provider's notification path (each source's `paths`, mounted in intake.module.ts): the ids the
 * body names are kept in provider_inbox before the 200, and the intake's worker settles each by asking
 * the provider; the body is never trusted. A body that is not a notification is 400 (nothing kept); an
 * inbox full is 503 with Retry-After, and a write that fails 503, so that the provider sends it again.
 * The unguessable path keeps anyone else from knocking (masked in logs and metrics); what one request can
 * cost is bounded by the source's parser (a few ids) and its inboxMax.
 */
@Injectable()
export class ProviderIntakeMiddleware implements NestMiddleware {
  private readonly logger = new Logger(ProviderIntakeMiddleware.name);
  /** The notification paths, read from the registry on the first request (a provider may be added until the application starts). */
  private routes: Map<string, { provider: string; source: NotificationSource; kind: string }> | null = null;

  constructor(private readonly intake: ProviderIntake) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    this.routes ??= new Map(this.intake.sources().flatMap(({ provider, source }) => source.paths.map(({ path, kind }) => [trimmed(path), { provider, source, kind }] as const)));
    const route = request.method === 'POST' ? this.routes.get(trimmed(request.originalUrl.split('?')[0])) : undefined;
    if (!route) return next();
    if (route.source.authentic && !route.source.authentic(request.headers)) {
      this.logger.warn({ provider: route.provider, kind: route.kind }, 'A provider notification came without the header the provider is configured to send; refused, nothing kept');
      response.status(401).json({ type: 'about:blank', title: 'Unauthorized', status: 401 });
      return;
    }
    const named = route.source.parse(route.kind, request.body);
    if (named === null) {
      response.status(400).json({ type: 'about:blank', status: 400, ...route.source.expected(route.kind) });
      return;
    }
    try {
      if (!(await this.intake.keepAll(route.provider, route.source, route.kind, named))) {
        this.logger.warn({ provider: route.provider, kind: route.kind }, 'A provider notification inbox is full; answering 503 so that the notification is sent again');
        response.status(503).setHeader('Retry-After', String(INBOX_FULL_RETRY_AFTER_SECONDS));
        response.json({ type: 'about:blank', title: 'Try again later', status: 503, detail: 'Too many notifications waiting to be checked' });
        return;
      }
    } catch (error) {
      // Not written: the provider must send it again (it retries what is not answered 2xx).
      this.logger.error({ err: error, provider: route.provider, kind: route.kind }, 'Could not keep a provider notification; answering 503 so that it is sent again');
      response.status(503).json({ type: 'about:blank', title: 'Try again later', status: 503 });
      return;
    }
    response.status(200).json({});
  }
}

function trimmed(path: string): string {
  return path.replace(/\/+$/, '');
}
