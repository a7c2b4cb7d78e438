import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { describeDatabaseUrl } from '../database/database-url';
import { DomainError } from '../domain/domain-error';
import { REDIS_CLIENT } from '../redis/redis.module';
import { countInWindow } from '../redis/window-counter';

const WINDOW_SECONDS = 3600;

/**
 * Test events and redeliveries a seller asks for itself (MANUAL_SENDS_PER_HOUR), counted in Redis per
 * seller over a fixed hour, so that the dashboard's buttons cannot turn the service into an amplifier
 * against a webhook's host. Fails open while Redis is down, like the other limits.
 */
@Injectable()
export class ManualSendsLimiter {
  private readonly logger = new Logger('ManualSendsLimiter');
  private readonly prefix: string;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {
    this.prefix = `manual-sends:${describeDatabaseUrl(config.databaseUrl).databaseName}:`;
  }

  /** Counts one manual send of this seller, or throws RATE_LIMITED (details.retryAfterSeconds) past the hour's limit. */
  async take(sellerId: number): Promise<void> {
    const limit = this.config.notificationLimits.manualSendsPerHour;
    let counted;
    try {
      counted = await countInWindow(this.redis, `${this.prefix}${sellerId}`, WINDOW_SECONDS);
    } catch (error) {
      this.logger.warn({ err: error }, 'Manual send counters unavailable (Redis): test events and redeliveries are not limited meanwhile');
      return;
    }
    if (counted.count <= limit) return;
    const minutes = Math.ceil(counted.secondsLeft / 60);
    throw new DomainError(
      'RATE_LIMITED',
      `Limite de ${limit} envios de teste e reenvios por hora atingido. Tente de novo em ${minutes} minuto${minutes > 1 ? 's' : ''}.`,
      { retryAfterSeconds: counted.secondsLeft },
    );
  }
}
