import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from './auth/auth.module';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { RedisModule } from './redis/redis.module';
import { SellerModule } from './seller/seller.module';
import { SubscriptionEntity } from './subscriptions/entities/subscription.entity';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';

/** What the operator CLI needs: no HTTP server, no queues, no jobs; Redis to tell running instances of a revoked pair; the subscriptions' rows for their sealed card tokens. */
@Module({ imports: [AppConfigModule, DatabaseModule, RedisModule, AuthModule, SellerModule, TypeOrmModule.forFeature([SubscriptionEntity])], providers: [SubscriptionsRepository] })
export class CliModule {}
