import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsISO8601, IsOptional } from 'class-validator';
import { PROVIDER_SALE_EVENTS } from '../../domain/sale-status';
import { WITHDRAWAL_EVENTS, WithdrawalEvent } from '../../domain/withdrawal-status';

/** Provider events a seller can simulate on a sale (platform.md §3). */
export const SANDBOX_SALE_EVENTS = PROVIDER_SALE_EVENTS;

export class SaleEventDto {
  @ApiProperty({ enum: SANDBOX_SALE_EVENTS, example: 'PAYMENT_CONFIRMED' })
  @IsDefined()
  @IsIn(SANDBOX_SALE_EVENTS, { message: `event must be one of: ${SANDBOX_SALE_EVENTS.join(', ')}` })
  event: (typeof SANDBOX_SALE_EVENTS)[number];
}

/** What the sandbox acquirer or PSP does with a refund it held (an amount whose cents are 13). */
export const SANDBOX_REFUND_EVENTS = ['COMPLETED', 'FAILED'] as const;

export class RefundEventDto {
  @ApiProperty({ enum: SANDBOX_REFUND_EVENTS, example: 'FAILED', description: 'COMPLETED: the money went back to the customer; FAILED: the provider did not make it (the seller gets back what it took)' })
  @IsDefined()
  @IsIn(SANDBOX_REFUND_EVENTS, { message: `event must be one of: ${SANDBOX_REFUND_EVENTS.join(', ')}` })
  event: (typeof SANDBOX_REFUND_EVENTS)[number];
}

/** What the payer does with a Pix Automático authorization in their bank app (sandbox). */
export const PAYER_DECISIONS = ['AUTHORIZE', 'REJECT', 'EXPIRE', 'REVOKE'] as const;

export class AutomaticPixAuthorizationEventDto {
  @ApiProperty({
    enum: PAYER_DECISIONS,
    example: 'AUTHORIZE',
    description: 'AUTHORIZE, REJECT or EXPIRE an authorization waiting for the payer; REVOKE one authorized (the payer cancels it in their bank: the subscription is cancelled)',
  })
  @IsDefined()
  @IsIn(PAYER_DECISIONS, { message: `event must be one of: ${PAYER_DECISIONS.join(', ')}` })
  event: (typeof PAYER_DECISIONS)[number];
}

/** What the payer's account does with the scheduled attempt of a Pix Automático charge (sandbox). */
export const ATTEMPT_OUTCOMES = ['PAID', 'INSUFFICIENT_FUNDS'] as const;

export class AutomaticPixAttemptDto {
  @ApiProperty({ enum: ATTEMPT_OUTCOMES, example: 'INSUFFICIENT_FUNDS', description: 'PAID: the charge is collected; INSUFFICIENT_FUNDS: the attempt fails and the gateway asks for the next retry' })
  @IsDefined()
  @IsIn(ATTEMPT_OUTCOMES, { message: `outcome must be one of: ${ATTEMPT_OUTCOMES.join(', ')}` })
  outcome: (typeof ATTEMPT_OUTCOMES)[number];
}

export class WithdrawalEventDto {
  @ApiProperty({ enum: WITHDRAWAL_EVENTS, example: 'COMPLETED' })
  @IsDefined()
  @IsIn(WITHDRAWAL_EVENTS, { message: `event must be one of: ${WITHDRAWAL_EVENTS.join(', ')}` })
  event: WithdrawalEvent;
}

export class SchedulerRunDto {
  @ApiPropertyOptional({ example: '2026-12-01T12:00:00.000Z', description: 'The instant to run the jobs at; default now' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'now must be an ISO 8601 date-time' })
  now?: string;
}

export class SchedulerRunResponse {
  @ApiProperty({ example: '2026-12-01T12:00:00.000Z' }) now: string;
  @ApiProperty({ example: 2, description: 'PIX and boletos cancelled for expiry' }) expiredSales: number;
  @ApiProperty({ example: 1, description: 'Card reserves released to available' }) releasedReserves: number;
  @ApiProperty({ example: 0, description: 'Card sales left in processing, resolved by asking the provider' }) recoveredCharges: number;
  @ApiProperty({ example: 0, description: 'Card charges approved after their subscription was cancelled or paused, refunded' }) refundedCharges: number;
  @ApiProperty({ example: 0, description: 'Withdrawals whose payout the payout provider never received, sent again under the same reference' }) sentPayouts: number;
  @ApiProperty({ example: 0, description: 'Withdrawals without news whose payout the provider knew, recorded or moved on what it said (a lost answer or callback)' })
  recoveredPayouts: number;
  @ApiProperty({
    example: { renewals: 1, retries: 0, cancelled: 0, pastDue: 0 },
    description: 'Subscription billing: renewals charged or issued, card retries, cancellations (scheduled or grace), PIX renewals gone PAST_DUE',
  })
  subscriptions: { renewals: number; retries: number; cancelled: number; pastDue: number };
  @ApiProperty({
    example: { chargesSent: 1, chargesSettled: 0, retriesAsked: 0, authorizationsChanged: 0 },
    description: 'Pix Automático: recurring charges sent to the PSP, settled (paid), retries asked after failed attempts, authorizations that changed',
  })
  automaticPix: { chargesSent: number; chargesSettled: number; retriesAsked: number; authorizationsChanged: number };
}
