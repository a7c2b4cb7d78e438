import { Logger } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import Redis from 'ioredis';

type Hit = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * The rate limit's counters in Redis (@nest-lab/throttler-storage-redis), under a prefix of this
 * database, failing open: while Redis is down requests are not limited rather than refused, since
 * sales and withdrawals keep working without Redis (the client fails fast, it does not queue).
 */
export class FailOpenRedisThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: ThrottlerStorageRedisService;
  private lastWarning = 0;

  constructor(client: Redis, private readonly prefix: string) {
    this.redis = new ThrottlerStorageRedisService(client);
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<Hit> {
    try {
      return await this.redis.increment(`${this.prefix}${key}`, ttl, limit, blockDuration, throttlerName);
    } catch (error) {
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ err: error }, 'Rate limit counters unavailable (Redis): requests are not limited meanwhile');
      }
      return { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
    }
  }
}
