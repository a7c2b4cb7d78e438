import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { sha256Hex } from '../common/crypto/secrets';
import { AppConfig } from '../config/app-config';
import { describeDatabaseUrl } from '../database/database-url';
import { REDIS_CLIENT } from '../redis/redis.module';

/**
 * Failed dashboard sign-ins, counted in Redis per account (e-mail) and per client address over a
 * window (LOGIN_MAX_ATTEMPTS_PER_ACCOUNT, LOGIN_MAX_ATTEMPTS_PER_ADDRESS, LOGIN_ATTEMPTS_WINDOW_SECONDS).
 * Independent of RATE_LIMIT_RPS, so it stays on where the API's limit is off. While Redis is down the
 * limit fails open, like the API's rate limit, and a warning is logged.
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

  /** Seconds until this account or address may try again, or 0 when it may try now. */
  async waitSeconds(email: string, address: string): Promise<number> {
    const limits = this.config.loginLimits;
    try {
      const [account, client] = await this.redis.mget(this.accountKey(email), this.addressKey(address));
      const keys: string[] = [];
      if (Number(account ?? 0) >= limits.perAccount) keys.push(this.accountKey(email));
      if (Number(client ?? 0) >= limits.perAddress) keys.push(this.addressKey(address));
      if (keys.length === 0) return 0;
      const ttls = await Promise.all(keys.map((key) => this.redis.ttl(key)));
      return Math.max(1, ...ttls);
    } catch (error) {
      this.warn(error);
      return 0;
    }
  }

  /** Counts a failed sign-in against the account and the address. */
  async recordFailure(email: string, address: string): Promise<void> {
    const window = this.config.loginLimits.windowSeconds;
    try {
      // SET ... EX ... NX starts a key's window only when it is new, and INCR keeps its expiry: no
      // EXPIRE ... NX, which Redis refuses before 7.0 (the whole MULTI was aborted, and nothing counted).
      const multi = this.redis.multi();
      for (const key of [this.accountKey(email), this.addressKey(address)]) {
        multi.set(key, 0, 'EX', window, 'NX');
        multi.incr(key);
      }
      const results = await multi.exec();
      for (const [error] of results ?? []) if (error) throw error;
    } catch (error) {
      this.warn(error);
    }
  }

  /** A successful sign-in clears the account's count (the address keeps its own). */
  async recordSuccess(email: string): Promise<void> {
    try {
      await this.redis.del(this.accountKey(email));
    } catch (error) {
      this.warn(error);
    }
  }

  private accountKey(email: string): string {
    return `${this.prefix}account:${sha256Hex(String(email).trim().toLowerCase())}`;
  }

  private addressKey(address: string): string {
    return `${this.prefix}address:${address}`;
  }

  private warn(error: unknown): void {
    this.logger.warn({ err: error }, 'Sign-in attempt counters unavailable (Redis): sign-ins are not limited meanwhile');
  }
}
