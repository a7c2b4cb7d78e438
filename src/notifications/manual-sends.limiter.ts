import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { describeDatabaseUrl } from '../database/database-url';
import { DomainError } from '../domain/domain-error';
import { REDIS_CLIENT } from '../redis/redis.module';
import { countInWindow } from '../redis/window-counter';

const WINDOW_SECONDS = 3600;

/**
 * Takes up to ARGV[1] sends from the hour's budget ARGV[2] (the window of ARGV[3] seconds starts with its
 * first send, as countInWindow's): how many it took, and the seconds the window still lasts. One script,
 * so two bulk redeliveries at once never take more than the budget between them. Redis 2.6 commands only.
 */
const TAKE_UP_TO_SCRIPT = `
redis.call('SET', KEYS[1], 0, 'EX', ARGV[3], 'NX')
local used = tonumber(redis.call('GET', KEYS[1]))
local taken = math.min(tonumber(ARGV[1]), math.max(0, tonumber(ARGV[2]) - used))
if taken > 0 then redis.call('INCRBY', KEYS[1], taken) end
return {taken, redis.call('TTL', KEYS[1])}`;

/** Gives ARGV[1] sends back to a window still running (never to a new one). */
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECRBY', KEYS[1], ARGV[1]) end
return 0`;

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
      counted = await countInWindow(this.redis, this.key(sellerId), WINDOW_SECONDS);
    } catch (error) {
      this.logger.warn({ err: error }, 'Manual send counters unavailable (Redis): test events and redeliveries are not limited meanwhile');
      return;
    }
    if (counted.count <= limit) return;
    throw this.limited(counted.secondsLeft);
  }

  /**
   * A bulk redelivery's share of the hour's budget: up to `wanted` sends, each event it puts back in line
   * counting as one send. Throws RATE_LIMITED (details.retryAfterSeconds) when none is left. Redis down:
   * `wanted`, not limited, like `take`. Give back what the redelivery did not use with `giveBack`.
   */
  async takeUpTo(sellerId: number, wanted: number): Promise<number> {
    let taken: number;
    let secondsLeft: number;
    try {
      const answer = (await this.redis.eval(TAKE_UP_TO_SCRIPT, 1, this.key(sellerId), wanted, this.config.notificationLimits.manualSendsPerHour, WINDOW_SECONDS)) as [number, number];
      [taken, secondsLeft] = answer.map(Number);
    } catch (error) {
      this.logger.warn({ err: error }, 'Manual send counters unavailable (Redis): test events and redeliveries are not limited meanwhile');
      return wanted;
    }
    if (taken === 0) throw this.limited(secondsLeft > 0 ? secondsLeft : WINDOW_SECONDS);
    return taken;
  }

  /** Sends taken by `takeUpTo` and not used, back to this hour's budget. */
  async giveBack(sellerId: number, count: number): Promise<void> {
    if (count <= 0) return;
    try {
      await this.redis.eval(GIVE_BACK_SCRIPT, 1, this.key(sellerId), count);
    } catch (error) {
      this.logger.warn({ err: error }, 'Manual send counters unavailable (Redis): unused redeliveries not given back');
    }
  }

  private key(sellerId: number): string {
    return `${this.prefix}${sellerId}`;
  }

  private limited(secondsLeft: number): DomainError {
    const limit = this.config.notificationLimits.manualSendsPerHour;
    const minutes = Math.ceil(secondsLeft / 60);
    return new DomainError(
      'RATE_LIMITED',
      `Limite de ${limit} envios de teste e reenvios por hora atingido. Tente de novo em ${minutes} minuto${minutes > 1 ? 's' : ''}.`,
      { retryAfterSeconds: secondsLeft },
    );
  }
}
