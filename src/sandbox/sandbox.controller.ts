import { Body, Controller, HttpCode, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { TransactionsExceptionFilter } from '../common/filters/transactions-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { SandboxOnlyGuard } from '../common/guards/sandbox-only.guard';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { TransactionResponse } from '../sales/dto/sale.response';
import { CashoutService } from '../cashout/cashout.service';
import { WithdrawalLookupResponse } from '../cashout/dto/cashout.dto';
import { BillingService } from '../payments/billing.service';
import { ChargesService } from '../payments/charges.service';
import { WithdrawalEventDto, SaleEventDto, SchedulerRunDto, SchedulerRunResponse } from './dto/sandbox.dto';

/** The sandbox provider's events and the scheduler, for integration tests (platform.md §3). */
@ApiTags('Sandbox')
@Controller('api/sandbox')
@UseGuards(SandboxOnlyGuard)
@ApiKeyAuth()
@UseFilters(TransactionsExceptionFilter)
export class SandboxController {
  constructor(
    private readonly sales: ChargesService,
    private readonly cashouts: CashoutService,
    private readonly billing: BillingService,
  ) {}

  @Post('sales/:id/events')
  @HttpCode(200)
  @ApiOperation({ summary: 'Simulate a provider event on a sale: payment, expiry, refund, chargeback, MED…' })
  @ApiOkResponse({ type: TransactionResponse, description: 'The transaction after the move' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION'])
  saleEvent(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: SaleEventDto,
  ): Promise<TransactionResponse> {
    return this.sales.applyEvent(seller.id, id, body.event);
  }

  @Post('cashouts/:id/events')
  @HttpCode(200)
  @ApiOperation({ summary: "Simulate the payout provider's callback on a withdrawal: PROCESSING, COMPLETED, REJECTED, CANCELLED" })
  @ApiOkResponse({ type: WithdrawalLookupResponse, description: 'The withdrawal after the move' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION'])
  cashoutEvent(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: WithdrawalEventDto,
  ): Promise<WithdrawalLookupResponse> {
    return this.cashouts.applyEvent(seller.id, id, body.event);
  }

  @Post('scheduler/run')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run for this seller what the scheduled jobs would do at `now`',
    description:
      'Subscription billing (renewals, dunning retries, grace periods, scheduled cancellations), PIX and boleto expiry, card reserve releases, ' +
      'card sales left in processing resolved with the provider, unsent payouts sent.',
  })
  @ApiOkResponse({ type: SchedulerRunResponse })
  @ApiErrorResponses('transactions', ['VALIDATION_ERROR', 'UNAUTHORIZED'])
  async runScheduler(@CurrentSeller() seller: AuthenticatedSeller, @Body() body: SchedulerRunDto): Promise<SchedulerRunResponse> {
    const now = body.now ? new Date(body.now) : new Date();
    const subscriptions = await this.billing.runBilling(now, seller.id);
    const sales = await this.sales.runDueWork(now, seller.id);
    const sentPayouts = await this.cashouts.recoverPayouts(seller.id);
    return { now: now.toISOString(), ...sales, sentPayouts, subscriptions };
  }
}
