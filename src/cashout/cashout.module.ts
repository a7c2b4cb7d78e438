import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminModule } from '../admin/admin.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { LedgerModule } from '../ledger/ledger.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { ProvidersModule } from '../providers/providers.module';
import { SellerModule } from '../seller/seller.module';
import { CashoutController } from './cashout.controller';
import { CashoutRepository } from './cashout.repository';
import { CashoutProcessor } from './cashout.processor';
import { CashoutService, PAYOUTS_QUEUE } from './cashout.service';
import { WithdrawalEntity } from './entities/withdrawal.entity';

@Module({
  imports: [
    TypeOrmModule.forFeature([WithdrawalEntity]),
    BullModule.registerQueue({ name: PAYOUTS_QUEUE }),
    SellerModule,
    AdminModule,
    LedgerModule,
    IdempotencyModule,
    NotificationsModule,
    ProvidersModule,
  ],
  controllers: [CashoutController],
  providers: [CashoutService, CashoutRepository, CashoutProcessor],
  // The queue is exported for the operator's metrics (its depth).
  exports: [CashoutService, BullModule],
})
export class CashoutModule {}
