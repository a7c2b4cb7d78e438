import { Controller, Get, Render, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { BalanceService } from '../../balance/balance.service';
import { SalesRevenueService } from '../../sales/revenue/sales-revenue.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';

/** The dashboard's first page: balance, revenue, the last 30 days of paid sales and the latest sales. */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardOverviewController {
  constructor(
    private readonly balance: BalanceService,
    private readonly revenue: SalesRevenueService,
  ) {}

  @Get()
  @Render('overview')
  async overview(@CurrentUser() user: DashboardUser): Promise<Record<string, unknown>> {
    const [balance, revenue] = await Promise.all([this.balance.balanceOf(user.sellerId), this.revenue.revenueOf(user.sellerId)]);
    return { balance, revenue };
  }
}
