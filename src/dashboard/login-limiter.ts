import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { sha256Hex } from '../common/crypto/secrets';
import { AppConfig } from '../config/app-config';
import { describeDatabaseUrl } from '../database/database-url';
import { REDIS_CLIENT } from '../redis/redis.module';

/** What may be tried: signing in (per account and per address), or changing a password (per user and per address). */
export type AttemptKind = 'sign-in' | 'password-change';

/** Whose attempt it is: the account found for what was typed (its user id), or, when none, what was typed. */
export type AttemptSubject = { userId: number } | { unknownEmail: string };

/**
 * One attempt, counted atomically before the password is checked: both counters are incremented (each
 * created with the window as its expiry), and when either is then over its limit the attempt is refused
 * and taken back, so a refused attempt neither verifies nor counts. Answers 0 when allowed, or the
 * seconds until the counter over its limit expires. Redis 2.6+ (EVAL; no EXPIRE option of Redis 7).
 */
const ATTEMPT_SCRIPT = `
local counts = {}
for i = 1, 2 do
  counts[i] = redis.call('INCR', KEYS[i])
  if counts[i] == 1 then redis.call('EXPIRE', KEYS[i], ARGV[1]) end
end
local wait = 0
for i = 1, 2 do
  if counts[i] > tonumber(ARGV[i + 1]) then
    local ttl = redis.call('TTL', KEYS[i])
    if ttl > wait then wait = ttl end
    if ttl < 0 then wait = math.max(wait, tonumber(ARGV[1])) end
  end
end
if wait > 0 then
  for i = 1, 2 do redis.call('DECR', KEYS[i]) end
end
return wait`;

/** A right attempt: the subject's counter deleted, the address's taken back by one (never below 0, never without its expiry). */
const SUCCEEDED_SCRIPT = `
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 0`;

/**
 * Dashboard sign-ins and password changes, limited in Redis per account and per client address over a
 * window (LOGIN_MAX_ATTEMPTS_PER_ACCOUNT, LOGIN_MAX_ATTEMPTS_PER_ADDRESS, LOGIN_ATTEMPTS_WINDOW_SECONDS).
 * Each attempt is counted before its password is verified (concurrent guesses cannot all be verified),
 * and the account's counter is keyed by the account PostgreSQL found (`lower(email)`), never by the
 * string typed, so no spelling of an e-mail gets a fresh counter. A successful attempt takes itself back
 * and clears the account's counter. Independent of RATE_LIMIT_RPS; while Redis is down the limit fails
 * open, like the API's rate limit, and a warning is logged.
 */
@Injectable()
export class LoginLimiter {
  private readonly logger = new Logger('LoginLimiter');
  private readonly prefix: string;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {
    this.prefix = `login:${describeDatabaseUrl(config.databaseUrl).databaseName}:`;
  }

  /** Counts one attempt; 0 when it may go on to the password check, else the seconds to wait. */
  async attempt(kind: AttemptKind, subject: AttemptSubject, address: string): Promise<number> {
    const limits = this.config.loginLimits;
    try {
      const wait = await this.redis.eval(
        ATTEMPT_SCRIPT,
        2,
        this.subjectKey(kind, subject),
        this.addressKey(kind, address),
        limits.windowSeconds,
        limits.perAccount,
        limits.perAddress,
      );
      return Number(wait);
    } catch (error) {
      this.warn(error);
      return 0;
    }
  }

  /** The attempt was right: it is taken back from the address, and the account's counter starts again. */
  async succeeded(kind: AttemptKind, subject: AttemptSubject, address: string): Promise<void> {
    try {
      await this.redis.eval(SUCCEEDED_SCRIPT, 2, this.subjectKey(kind, subject), this.addressKey(kind, address));
    } catch (error) {
      this.warn(error);
    }
  }

  private subjectKey(kind: AttemptKind, subject: AttemptSubject): string {
    const who = 'userId' in subject ? `user:${subject.userId}` : `unknown:${sha256Hex(subject.unknownEmail.trim().toLowerCase())}`;
    return `${this.prefix}${kind}:${who}`;
  }

  private addressKey(kind: AttemptKind, address: string): string {
    return `${this.prefix}${kind}:address:${address}`;
  }

  private warn(error: unknown): void {
    this.logger.warn({ err: error }, 'Sign-in attempt counters unavailable (Redis): sign-ins are not limited meanwhile');
  }
}
