import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { LedgerModule } from '../ledger/ledger.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { ProvidersModule } from '../providers/providers.module';
import { SellerModule } from '../seller/seller.module';
import { SaleItemEntity } from './entities/sale-item.entity';
import { SaleEntity } from './entities/sale.entity';
import { SaleHooks } from './sale-hooks';
import { SaleTransitionsService } from './sale-transitions.service';
import { SalesController } from './sales.controller';
import { SalesRepository } from './sales.repository';
import { SalesScheduler } from './sales.scheduler';
import { SalesService } from './sales.service';

@Module({
  imports: [TypeOrmModule.forFeature([SaleEntity, SaleItemEntity]), SellerModule, LedgerModule, IdempotencyModule, ProvidersModule, NotificationsModule],
  controllers: [SalesController],
  providers: [SalesService, SaleTransitionsService, SaleHooks, SalesRepository, SalesScheduler],
  exports: [SalesService, SaleTransitionsService, SaleHooks],
})
export class SalesModule {}
