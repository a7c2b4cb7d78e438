import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PaymentsModule } from '../payments/payments.module';
import { SalesModule } from '../sales/sales.module';
import { SellerModule } from '../seller/seller.module';
import { AdminController } from './admin.controller';
import { PlatformSettingsEntity } from './entities/platform-settings.entity';
import { SettingsRepository } from './settings.repository';
import { SettingsService } from './settings.service';

@Module({
  imports: [TypeOrmModule.forFeature([PlatformSettingsEntity]), SellerModule, SalesModule, PaymentsModule],
  controllers: [AdminController],
  providers: [SettingsService, SettingsRepository],
  exports: [SettingsService],
})
export class AdminModule {}
