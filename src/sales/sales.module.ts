import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SaleItemEntity } from './entities/sale-item.entity';
import { SaleEntity } from './entities/sale.entity';
import { PixQrCodeRenderer } from './pix-qr-code-renderer';
import { SalesRepository } from './sales.repository';
import { SalesService } from './sales.service';

/** The sales' rows and reads; the payments module writes and moves them. */
@Module({
  imports: [TypeOrmModule.forFeature([SaleEntity, SaleItemEntity])],
  providers: [SalesService, SalesRepository, PixQrCodeRenderer],
  exports: [SalesService, SalesRepository, PixQrCodeRenderer],
})
export class SalesModule {}
