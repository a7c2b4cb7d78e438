import { Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { RedisModule } from './redis/redis.module';
import { SellerModule } from './seller/seller.module';

/** What the operator CLI needs: no HTTP server, no queues, no jobs; Redis to tell running instances of a revoked pair. */
@Module({ imports: [AppConfigModule, DatabaseModule, RedisModule, AuthModule, SellerModule] })
export class CliModule {}
