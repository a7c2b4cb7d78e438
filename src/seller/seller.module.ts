import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BalanceModule } from '../balance/balance.module';
import { SalesRevenueModule } from '../sales/revenue/sales-revenue.module';
import { UsersModule } from '../users/users.module';
import { SellerEntity } from './entities/seller.entity';
import { SellerController } from './seller.controller';
import { SellerRepository } from './seller.repository';
import { SellerService } from './seller.service';

@Module({
  imports: [TypeOrmModule.forFeature([SellerEntity]), BalanceModule, SalesRevenueModule, UsersModule],
  controllers: [SellerController],
  providers: [SellerService, SellerRepository],
  exports: [SellerService],
})
export class SellerModule {}
