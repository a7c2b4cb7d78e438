import { Body, Controller, HttpCode, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { Janitor } from '../janitor/janitor.service';
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
import { WithdrawalLookupResponse } from '../cashout/dto/withdrawal.dto';
import { BillingService } from '../payments/billing.service';
import { ChargesService } from '../payments/charges.service';
import { SubscriptionResponse } from '../subscriptions/dto/subscription.response';
import { AutomaticPixAttemptDto, AutomaticPixAuthorizationEventDto, RefundEventDto, WithdrawalEventDto, SaleEventDto, SchedulerRunDto, SchedulerRunResponse } from './dto/sandbox.dto';
import { RefundResponse } from '../payments/dto/refund.dto';
import { SandboxPayerService } from './sandbox-payer.service';
import { SandboxRecordsService } from './sandbox-records.service';

/** The sandbox provider's events and the scheduler, for integration tests (platform.md §3). */
@ApiTags('Sandbox')
@Controller('api/sandbox')
@UseGuards(SandboxOnlyGuard)
@ApiKeyAuth()
@UseFilters(TransactionsExceptionFilter)
export class SandboxController {
  constructor(
    private readonly sales: ChargesService,
    private readonly withdrawals: CashoutService,
    private readonly billing: BillingService,
    private readonly payer: SandboxPayerService,
    private readonly records: SandboxRecordsService,
    private readonly janitor: Janitor,
  ) {}

  @Post('sales/:id/events')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Simulate a provider event on a sale: payment, expiry, refund, chargeback, MED…',
    description: 'Only on a sale the sandbox holds: a PIX sale whose charge a real PSP issued (PIX_PROVIDER=api-pix) answers 422 NOT_SUPPORTED and does not move.',
  })
  @ApiOkResponse({ type: TransactionResponse, description: 'The transaction after the move' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION', 'NOT_SUPPORTED'])
  async saleEvent(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: SaleEventDto,
  ): Promise<TransactionResponse> {
    await this.records.admitEvent(seller.id, id, body.event);
    // A journey-3 QR authorizes the Pix Automático recurrence and pays the first charge together: the
    // authorization first, so that the subscription's postbacks of the payment carry it (issue 35).
    if (body.event === 'PAYMENT_CONFIRMED') await this.payer.payingFirstCharge(seller.id, id, new Date());
    return this.sales.applyEvent(seller.id, id, body.event);
  }

  @Post('refunds/:id/events')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Settle a refund the sandbox held: COMPLETED or FAILED',
    description:
      "A seller's refund of an amount whose cents are 13 (40.13, 100.13) is held PENDING by the sandbox acquirer or PSP until this route settles it, " +
      'through the same code as a real provider’s answer (FAILED gives back what the refund took). Only on a sale the sandbox holds.',
  })
  @ApiOkResponse({ type: RefundResponse, description: 'The refund after the move' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION', 'NOT_SUPPORTED'])
  refundEvent(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number, @Body() body: RefundEventDto): Promise<RefundResponse> {
    return this.records.settleRefund(seller.id, id, body.event);
  }

  @Post('subscriptions/:id/automatic-pix')
  @HttpCode(200)
  @ApiOperation({ summary: "Pix Automático: the payer authorizes, rejects, lets expire or revokes the subscription's authorization in their bank app" })
  @ApiOkResponse({ type: SubscriptionResponse, description: 'The subscription after the change, with its automaticPix object' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION'])
  authorizationEvent(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: AutomaticPixAuthorizationEventDto,
  ): Promise<SubscriptionResponse> {
    return this.payer.decide(seller.id, id, body.event, new Date());
  }

  @Post('sales/:id/automatic-pix')
  @HttpCode(200)
  @ApiOperation({ summary: "Pix Automático: the payer's account settles the scheduled attempt of a renewal's recurring charge (paid, or refused for insufficient funds)" })
  @ApiOkResponse({ type: TransactionResponse, description: 'The transaction after the attempt' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION'])
  automaticPixAttempt(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: AutomaticPixAttemptDto,
  ): Promise<TransactionResponse> {
    return this.payer.settleAttempt(seller.id, id, body.outcome, new Date());
  }

  @Post('cashouts/:id/events')
  @HttpCode(200)
  @ApiOperation({
    // The operation's id as published before the handler's rename: generated clients keep their method name.
    operationId: 'SandboxController_cashoutEvent',
    summary: "Simulate the payout provider's callback on a withdrawal: PROCESSING, COMPLETED, REJECTED, CANCELLED",
    description:
      "The sandbox payout provider's record of the payout moves first, then the withdrawal. 409 when either cannot move so: a payout whose net amount has 17 cents " +
      'is paid at once with its answer lost, and only the recovery job (its look-up) settles it.',
  })
  @ApiOkResponse({ type: WithdrawalLookupResponse, description: 'The withdrawal after the move' })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'INVALID_TRANSITION'])
  async withdrawalEvent(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: WithdrawalEventDto,
  ): Promise<WithdrawalLookupResponse> {
    const reference = await this.withdrawals.admitEvent(seller.id, id, body.event);
    // The sandbox payout provider's record moves first, as a provider's record does before it calls back:
    // a look-up of the payout (the recovery job's) then says what the callback says.
    await this.records.playPayoutCallback(reference, body.event);
    return this.withdrawals.applyEvent(seller.id, id, body.event);
  }

  @Post('scheduler/run')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run for this seller what the scheduled jobs would do at `now`',
    description:
      'Subscription billing (renewals, dunning retries, grace periods, scheduled cancellations), PIX and boleto expiry, card reserve releases, ' +
      'card sales left in processing resolved with the provider, withdrawals without news from the payout provider asked about (a payout it never received sent again). A `now` ahead of the real clock is refused (422 NOT_SUPPORTED) ' +
      'while PIX goes through a real PSP, whose charges and recurrences it would expire, bill and cancel early, unless SANDBOX_CLOCK_MOVES_REAL_RECORDS=true (test environments).',
  })
  @ApiOkResponse({ type: SchedulerRunResponse })
  @ApiErrorResponses('transactions', ['VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_SUPPORTED'])
  async runScheduler(@CurrentSeller() seller: AuthenticatedSeller, @Body() body: SchedulerRunDto): Promise<SchedulerRunResponse> {
    const now = this.records.clockAt(body.now);
    const subscriptions = await this.billing.runBilling(now, seller.id);
    const sales = await this.sales.runDueWork(now, seller.id);
    // What is left pending at the providers, as the janitor's pass settles it (Pix Automático's charges due
    // sent and open ones asked about among it), then the payer's bank collects the attempts due by `now`:
    // the order Pix Automático had, and nothing else in the pass depends on the payer's bank.
    const pending = await this.janitor.pass(seller.id, now);
    await this.payer.collectDue(seller.id, now);
    return {
      now: now.toISOString(),
      ...sales,
      recoveredCharges: pending.recoveredCharges ?? 0,
      refundedCharges: pending.refundedCharges ?? 0,
      sentPayouts: pending.sentPayouts ?? 0,
      recoveredPayouts: pending.recoveredPayouts ?? 0,
      subscriptions,
      automaticPix: {
        chargesSent: pending.chargesSent ?? 0,
        chargesSettled: pending.chargesSettled ?? 0,
        retriesAsked: pending.retriesAsked ?? 0,
        authorizationsChanged: pending.authorizationsChanged ?? 0,
      },
    };
  }
}
