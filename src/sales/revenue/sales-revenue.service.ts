import { Injectable } from '@nestjs/common';
import { RevenueCounters, SalesRevenueRepository } from './sales-revenue.repository';

export type { RevenueCounters } from './sales-revenue.repository';

/** The seller's revenue counters of spec 2.9, from the sales the sales module owns. */
@Injectable()
export class SalesRevenueService {
  constructor(private readonly revenue: SalesRevenueRepository) {}

  revenueOf(sellerId: number): Promise<RevenueCounters> {
    return this.revenue.revenueOf(sellerId);
  }
}
