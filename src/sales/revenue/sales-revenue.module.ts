import { Module } from '@nestjs/common';
import { SalesRevenueRepository } from './sales-revenue.repository';
import { SalesRevenueService } from './sales-revenue.service';

/**
 * The sales module's revenue query, in a module of its own so that the seller module can read it
 * without a cycle (the sales module needs the seller's profile to take a payment).
 */
@Module({
  providers: [SalesRevenueService, SalesRevenueRepository],
  exports: [SalesRevenueService],
})
export class SalesRevenueModule {}
