import { Controller, Get, Inject, Logger, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Response } from 'express';
import Redis from 'ioredis';
import { RateLimitPer } from '../common/decorators/rate-limit.decorator';
import { REDIS_CLIENT } from '../redis/redis.module';

const CHECK_TIMEOUT_MS = 1500;

type RedisState = { status: 'up' } | { status: 'down'; degraded: true; message: string };

/** What an anonymous caller learns of a Redis outage: no client error text, host or port (those go to the log). */
const REDIS_DOWN: RedisState = { status: 'down', degraded: true, message: 'Redis does not answer' };

/**
 * Readiness and liveness. Readiness (`/health`) fails only when PostgreSQL does not answer: Redis down
 * is reported as degraded, because sales, withdrawals and subscriptions keep working (notifications wait
 * in the outbox), so a load balancer must not pull every instance during a Redis blip. Liveness
 * (`/health/live`) only says the process answers. Both are limited per client address, in a budget of
 * their own (RATE_LIMIT_RPS).
 */
@ApiTags('Health')
@Controller('health')
@RateLimitPer('probe')
export class HealthController {
  private readonly logger = new Logger('Health');
  private redisWasDown = false;

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {}

  @Get()
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: 200 while PostgreSQL answers (Redis down is reported as degraded); no keys needed' })
  @ApiResponse({ status: 200, description: 'Ready', schema: { example: { status: 'ok', info: { database: { status: 'up' }, redis: { status: 'up' } }, error: {}, details: {} } } })
  @ApiResponse({ status: 503, description: 'PostgreSQL does not answer', schema: { example: { status: 'error', info: {}, error: { database: { status: 'down' } }, details: {} } } })
  async check(@Res({ passthrough: true }) response: Response): Promise<HealthCheckResult> {
    const redis = await this.redisState();
    let result: HealthCheckResult;
    try {
      result = await this.health.check([() => this.database.pingCheck('database', { timeout: CHECK_TIMEOUT_MS })]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      response.status(503);
      result = error.getResponse() as HealthCheckResult;
    }
    return { ...result, info: { ...result.info, redis }, details: { ...result.details, redis } };
  }

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers (no dependency checked)' })
  @ApiResponse({ status: 200, schema: { example: { status: 'ok' } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  private async redisState(): Promise<RedisState> {
    try {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref());
      await Promise.race([this.redis.ping(), timeout]);
      this.redisWasDown = false;
      return { status: 'up' };
    } catch (error) {
      if (!this.redisWasDown) this.logger.warn({ err: error }, 'Readiness: Redis does not answer (reported as degraded)');
      this.redisWasDown = true;
      return REDIS_DOWN;
    }
  }
}
