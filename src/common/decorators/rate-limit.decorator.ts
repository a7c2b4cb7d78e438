import { SetMetadata } from '@nestjs/common';

/**
 * Whose budget of RATE_LIMIT_RPS a route's requests spend. ClientThrottlerGuard reads it from the route
 * that matched, never from the raw path (whose case a client chooses: routing ignores it).
 * - `seller`: the seller of a verified API key pair, one budget for all its pairs; a request without a
 *   valid pair spends its client address's;
 * - `address`: the client address, whatever keys come along (the default: operator API, metrics, dashboard);
 * - `probe`: the client address, in a budget of its own (health), so that a client's API traffic never
 *   starves its probes and probes never spend its API budget.
 */
export type RateLimitSubject = 'seller' | 'address' | 'probe';

export const RATE_LIMIT_SUBJECT = 'rateLimitSubject';

export const RateLimitPer = (subject: RateLimitSubject): ClassDecorator & MethodDecorator => SetMetadata(RATE_LIMIT_SUBJECT, subject);
