import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SellerModule } from '../seller/seller.module';
import { AdminController } from './admin.controller';
import { PlatformSettingsEntity } from './entities/platform-settings.entity';
import { SettingsRepository } from './settings.repository';
import { SettingsService } from './settings.service';

@Module({
  imports: [TypeOrmModule.forFeature([PlatformSettingsEntity]), SellerModule],
  controllers: [AdminController],
  providers: [SettingsService, SettingsRepository],
  exports: [SettingsService],
})
export class AdminModule {}
