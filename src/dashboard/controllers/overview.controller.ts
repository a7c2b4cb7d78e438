import { Controller, Get, Render, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { BalanceService } from '../../balance/balance.service';
import { cents, centsToBrl } from '../../domain/money';
import { EventsService } from '../../notifications/events.service';
import { SalesRevenueService } from '../../sales/revenue/sales-revenue.service';
import { SalesService } from '../../sales/sales.service';
import { barChart } from '../charts';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { failingEndpointsOf } from '../failing-endpoints';

/** The dashboard's first page: balance, revenue, the last 30 days of paid sales, the latest sales, and any failing notification URL. */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardOverviewController {
  constructor(
    private readonly balance: BalanceService,
    private readonly revenue: SalesRevenueService,
    private readonly sales: SalesService,
    private readonly events: EventsService,
  ) {}

  @Get()
  @Render('overview')
  async overview(@CurrentUser() user: DashboardUser): Promise<Record<string, unknown>> {
    const balance = await this.balance.balanceOf(user.sellerId);
    const revenue = await this.revenue.revenueOf(user.sellerId);
    const days = await this.sales.paidPerDay(user.sellerId, 30);
    const latest = await this.sales.list(user.sellerId, { limit: 5 });
    const chart = barChart(
      days.map((day) => ({
        label: `${day.day.slice(8, 10)}/${day.day.slice(5, 7)}`,
        value: day.amountCents,
        title: `${day.day.slice(8, 10)}/${day.day.slice(5, 7)}: ${centsToBrl(day.amountCents)} em ${day.count} venda${day.count === 1 ? '' : 's'}`,
      })),
      (max) => centsToBrl(cents(max)),
    );
    const paid30 = days.reduce((sum, day) => sum + day.amountCents, 0);
    const failingEndpoints = await failingEndpointsOf(this.events, user.sellerId);
    return { balance, revenue, chart, paid30, latest: latest.sales, failingEndpoints };
  }
}
