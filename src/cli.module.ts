import { Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { SellerModule } from './seller/seller.module';

/** What the operator CLI needs: no HTTP server, no queues, no jobs. */
@Module({ imports: [AppConfigModule, DatabaseModule, AuthModule, SellerModule] })
export class CliModule {}
