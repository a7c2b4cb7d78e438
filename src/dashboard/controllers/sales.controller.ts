import { Controller, Get, Param, Query, Render, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { IdParamPipe } from '../../common/pipes/id-param.pipe';
import { SALE_STATUSES } from '../../domain/sale-status';
import { SALE_PAYMENT_METHODS, SaleQueryDto } from '../../sales/dto/sale-query.dto';
import { SalesService } from '../../sales/sales.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { formErrorsOf, NO_ERRORS, validated } from '../forms';

const FILTER_FIELDS = ['status', 'paymentMethod', 'search', 'startDate', 'endDate'] as const;

/** The seller's sales: the filtered list and one sale's page, through SalesService (the API's rules). */
@ApiExcludeController()
@Controller('dashboard/sales')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardSalesController {
  constructor(private readonly sales: SalesService) {}

  @Get()
  @Render('sales')
  async list(@CurrentUser() user: DashboardUser, @Query() raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const filters = Object.fromEntries(FILTER_FIELDS.map((field) => [field, typeof raw[field] === 'string' ? raw[field] : '']));
    const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== '')).toString();
    const options = { statuses: SALE_STATUSES, methods: SALE_PAYMENT_METHODS };
    const { value, errors } = await validated(SaleQueryDto, { ...filters, page: raw.page });
    if (errors) return { filters, query, errors, sales: [], pagination: null, ...options };
    try {
      const result = await this.sales.list(user.sellerId, value);
      return { filters, query, errors: NO_ERRORS, ...result, ...options };
    } catch (error) {
      return { filters, query, errors: { ...formErrorsOf(error), fields: { endDate: 'A data final não pode ser anterior à inicial.' } }, sales: [], pagination: null, ...options };
    }
  }

  @Get(':id')
  @Render('sale')
  async detail(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number): Promise<Record<string, unknown>> {
    const sale = await this.sales.transaction(user.sellerId, id);
    const history = await this.sales.statusHistory(user.sellerId, id);
    return { sale, history };
  }
}
