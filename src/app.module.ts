import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { ThrottlerModule } from '@nestjs/throttler';
import { AdminModule } from './admin/admin.module';
import { LedgerAdminModule } from './ledger/ledger-admin.module';
import { AuthModule } from './auth/auth.module';
import { BalanceModule } from './balance/balance.module';
import { CashoutModule } from './cashout/cashout.module';
import { ClientThrottlerGuard } from './common/guards/client-throttler.guard';
import { FailOpenRedisThrottlerStorage } from './common/guards/fail-open-throttler.storage';
import { AppConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DatabaseModule } from './database/database.module';
import { DocsModule } from './docs/docs.module';
import { describeDatabaseUrl } from './database/database-url';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotificationsModule } from './notifications/notifications.module';
import { PaymentsModule } from './payments/payments.module';
import { PixModule } from './pix/pix.module';
import { IntakeModule } from './intake/intake.module';
import { JanitorModule } from './janitor/janitor.module';
import { REDIS_CLIENT, RedisModule } from './redis/redis.module';
import Redis from 'ioredis';
import { SandboxModule } from './sandbox/sandbox.module';
import { SalesModule } from './sales/sales.module';
import { SellerModule } from './seller/seller.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { TransactionsModule } from './transactions/transactions.module';

@Module({
  imports: [
    AppConfigModule,
    LoggingModule,
    DatabaseModule,
    RedisModule,
    ScheduleModule.forRoot(),
    BullModule.forRootAsync({
      inject: [AppConfig],
      // One key prefix per database, so instances on other databases never take each other's jobs.
      // A job whose worker died (a killed process) is taken again once its lock lapses, checked as often.
      useFactory: (config: AppConfig) => ({
        url: config.redisUrl,
        prefix: `bull:${describeDatabaseUrl(config.databaseUrl).databaseName}`,
        settings: { lockDuration: config.queueLockDurationMs, stalledInterval: config.queueLockDurationMs },
      }),
    }),
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, REDIS_CLIENT],
      useFactory: (config: AppConfig, redis: Redis) => ({
        throttlers: [{ name: 'default', ttl: 1000, limit: Math.max(config.rateLimitPerSecond, 1) }],
        skipIf: () => config.rateLimitPerSecond === 0,
        // Counters shared by every instance on this database, kept apart from other databases' instances.
        storage: new FailOpenRedisThrottlerStorage(redis, `throttle:${describeDatabaseUrl(config.databaseUrl).databaseName}:`),
      }),
    }),
    AuthModule,
    HealthModule,
    SellerModule,
    BalanceModule,
    SalesModule,
    TransactionsModule,
    SubscriptionsModule,
    PaymentsModule,
    PixModule,
    IntakeModule,
    JanitorModule,
    CashoutModule,
    NotificationsModule,
    AdminModule,
    LedgerAdminModule,
    SandboxModule,
    DashboardModule,
    MetricsModule,
    DocsModule,
  ],
  providers: [{ provide: APP_GUARD, useClass: ClientThrottlerGuard }],
})
export class AppModule {}
