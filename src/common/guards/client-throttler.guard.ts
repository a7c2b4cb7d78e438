import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, ThrottlerModuleOptions, ThrottlerRequest, ThrottlerStorage } from '@nestjs/throttler';
import { ApiKeysService } from '../../auth/api-keys.service';
import { RATE_LIMIT_SUBJECT, RateLimitSubject } from '../decorators/rate-limit.decorator';
import { AuthenticatedSeller, VERIFIED_PAIR_KEY } from './authenticated-seller';

type TrackedRequest = Record<string, unknown> & { ip?: string; headers: Record<string, unknown> };

/**
 * The rate limit (RATE_LIMIT_RPS per second, platform.md §6), counted in Redis so that it holds across
 * instances. Whose budget a request spends is decided by the route that matched (RateLimitPer, set by
 * ApiKeyAuth on the API's controllers), never by the raw path: the API per **seller** of a **verified**
 * key pair (the pair is authenticated here first, so knowing a seller's public key does not let anyone
 * spend that seller's budget, and a seller's many pairs share one budget); requests without a valid pair,
 * the operator API, metrics and the dashboard per client address; health per client address in a budget
 * of its own. A pair verified here is handed to ApiKeyGuard, which does not query it again. Routes that
 * match nothing (404) and what Express serves before Nest (/docs, the dashboard's assets) never get here.
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

  protected override handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context } = props;
    const subject = this.reflector.getAllAndOverride<RateLimitSubject | undefined>(RATE_LIMIT_SUBJECT, [context.getHandler(), context.getClass()]) ?? 'address';
    return super.handleRequest({ ...props, getTracker: (request) => this.trackerOf(request as TrackedRequest, subject) });
  }

  private async trackerOf(request: TrackedRequest, subject: RateLimitSubject): Promise<string> {
    const address = `ip:${request.ip ?? 'unknown'}`;
    if (subject === 'probe') return `probe:${address}`;
    if (subject === 'address') return address;
    const verified = request[VERIFIED_PAIR_KEY] as AuthenticatedSeller | undefined;
    if (verified) return `seller:${verified.id}`; // checked before its large body was read (checkRequest)
    const publicKey = request.headers['x-api-public-key'];
    const privateKey = request.headers['x-api-private-key'];
    if (typeof publicKey !== 'string' || typeof privateKey !== 'string') return address;
    try {
      const seller: AuthenticatedSeller = { id: await this.apiKeys.authenticate(publicKey, privateKey), publicKey };
      request[VERIFIED_PAIR_KEY] = seller;
      return `seller:${seller.id}`;
    } catch {
      return address; // ApiKeyGuard answers 401 or 403 for it
    }
  }

  /** One budget per tracker across all routes (not one per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }
}
