import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';
import { ApiKeysService } from '../../auth/api-keys.service';
import { AuthenticatedSeller, VERIFIED_PAIR_KEY } from './authenticated-seller';

/** Routes never limited: probes and documentation. */
const UNLIMITED = [/^\/health(\/|$)/, /^\/docs(-json)?(\/|$)/];

/**
 * The rate limit (RATE_LIMIT_RPS per second, platform.md §6), counted in Redis so that it holds across
 * instances, per **verified** API key pair: the pair is authenticated here first, so knowing a seller's
 * public key does not let anyone spend that seller's budget. Requests without a valid pair (none,
 * wrong, revoked, blocked) and every /admin request are counted per client address instead. A pair
 * verified here is handed to ApiKeyGuard, which does not query it again.
 */
@Injectable()
export class ClientThrottlerGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
  ) {
    super(options, storage, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<{ path: string }>();
    return UNLIMITED.some((pattern) => pattern.test(request.path)) || super.shouldSkip(context);
  }

  protected override async getTracker(request: Record<string, unknown> & { path: string; ip?: string; headers: Record<string, unknown> }): Promise<string> {
    const address = `ip:${request.ip ?? 'unknown'}`;
    if (request.path.startsWith('/admin')) return address;
    const publicKey = request.headers['x-api-public-key'];
    const privateKey = request.headers['x-api-private-key'];
    if (typeof publicKey !== 'string' || typeof privateKey !== 'string') return address;
    try {
      const seller: AuthenticatedSeller = { id: await this.apiKeys.authenticate(publicKey, privateKey), publicKey };
      request[VERIFIED_PAIR_KEY] = seller;
      return `pair:${publicKey}`;
    } catch {
      return address; // ApiKeyGuard answers 401 or 403 for it
    }
  }

  /** One budget per tracker across all routes (not one per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }
}
