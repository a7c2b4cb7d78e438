import { ApiProperty } from '@nestjs/swagger';
import { AUTOMATIC_PIX_STATUSES } from '../../domain/automatic-pix';

export class SubscriptionProduct {
  @ApiProperty({
    example: 12,
    description: "The sale item's productId; without one, the id of the product the gateway keeps for the item's title (created on first use, reused after)",
  })
  id: number;
  @ApiProperty({ example: 'Plano mensal' }) name: string;
}

/** Spec 2.6, list item form. */
export class SubscriptionListItem {
  @ApiProperty({ example: 17 }) id: number;
  @ApiProperty({ example: 'ACTIVE', enum: ['PENDING', 'ACTIVE', 'TRIALING', 'PAUSED', 'CANCELLED', 'PAST_DUE', 'EXPIRED'] }) status: string;
  @ApiProperty({ example: 'MONTHLY' }) billingCycle: string;
  @ApiProperty({ example: 9990, description: 'Cents' }) amount: number;
  @ApiProperty({ example: '2026-12-22T13:00:00.000Z', nullable: true, type: String, description: 'null once cancelled or expired' }) nextBillingDate: string | null;
  @ApiProperty({ example: null, nullable: true, type: String }) trialEndsAt: string | null;
  @ApiProperty({ example: 'joao@example.com' }) customerEmail: string;
  @ApiProperty({ example: 'João da Silva' }) customerName: string;
  @ApiProperty({ example: 'CREDIT_CARD', enum: ['PIX', 'CREDIT_CARD'] }) paymentMethod: string;
  @ApiProperty({ type: SubscriptionProduct }) product: SubscriptionProduct;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
}

/** Pix Automático (issue 22): the payer's authorization of the recurrence, and how renewals are paid. */
export class AutomaticPixAuthorization {
  @ApiProperty({ enum: AUTOMATIC_PIX_STATUSES, example: 'AUTHORIZED', description: 'PENDING until the payer decides in their bank app' }) status: string;
  @ApiProperty({ enum: ['JOURNEY_2', 'JOURNEY_3'], example: 'JOURNEY_3', description: "The BCB's journey: 3, the QR pays the first charge and authorizes; 2, it only authorizes (a trial)" })
  journey: string;
  @ApiProperty({ example: 'RR0000000020261125a1b2c3d4e5f', nullable: true, type: String, description: "The PSP's recurrence id (idRec)" }) recurrenceId: string | null;
  @ApiProperty({ example: '2026-11-25T13:00:05.000Z', nullable: true, type: String }) authorizedAt: string | null;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'When it was rejected, expired or cancelled' }) endedAt: string | null;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Why, e.g. "Cancelled by the payer (SLDB)"' }) endReason: string | null;
  @ApiProperty({
    enum: ['AUTOMATIC', 'AWAITING_AUTHORIZATION', 'QR_PER_CYCLE'],
    example: 'AUTOMATIC',
    description:
      'AUTOMATIC: each renewal is collected by the PSP on its due date; AWAITING_AUTHORIZATION: the payer has not decided yet (a renewal due meanwhile gets a QR code); ' +
      'QR_PER_CYCLE: a PIX QR code per renewal (the authorization was rejected, expired or cancelled)',
  })
  renewals: string;
  @ApiProperty({ example: 'PERMITE_3R_7D', description: 'Up to three retries within 7 days after a failed due date (days 1, 3 and 5)' }) retryPolicy: string;
  @ApiProperty({ example: 9990, description: 'Cents: the fixed amount the payer authorizes per charge (valorRec)' }) maxAmount: number;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'null: until the subscription is cancelled' }) endDate: string | null;
}

/** Spec 2.6, the whole subscription. */
export class SubscriptionResponse extends SubscriptionListItem {
  @ApiProperty({ example: '2026-11-22T13:00:05.000Z', nullable: true, type: String, description: 'null until activated' }) startedAt: string | null;
  @ApiProperty({ example: null, nullable: true, type: String }) cancelledAt: string | null;
  @ApiProperty({ example: '52998224725' }) customerDocument: string;
  @ApiProperty({ example: '11987654321' }) customerPhone: string;
  @ApiProperty({ example: '2026-11-22T13:00:05.000Z', nullable: true, type: String }) lastPaymentDate: string | null;
  @ApiProperty({ example: 'PAGO', enum: ['PAGO', 'PENDENTE', 'RECUSADO', 'FALHA'], description: 'Of the latest charge' }) lastPaymentStatus: string;
  @ApiProperty({ example: 1 }) totalBillings: number;
  @ApiProperty({ example: 1 }) successfulBillings: number;
  @ApiProperty({ example: 0 }) failedBillings: number;
  @ApiProperty({ example: 0, description: 'Charges the acquirer approved after the subscription was cancelled or paused, refunded to the customer at once' })
  refundedBillings: number;
  @ApiProperty({ example: { itemTitle: 'Plano mensal', customerPhone: '11987654321' } }) metadata: Record<string, unknown>;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Set by a cancellation at the period end' }) scheduledCancellationDate: string | null;
  @ApiProperty({ example: '2026-11-22T13:00:05.000Z' }) updatedAt: string;
  @ApiProperty({ type: AutomaticPixAuthorization, nullable: true, description: 'Pix Automático; null when the subscription did not opt in' })
  automaticPix: AutomaticPixAuthorization | null;
}

export class Pagination {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 42 }) total: number;
  @ApiProperty({ example: 3 }) totalPages: number;
}

export class SubscriptionPage {
  @ApiProperty({ type: SubscriptionListItem, isArray: true }) subscriptions: SubscriptionListItem[];
  @ApiProperty({ type: Pagination, description: "On a cursor's page, total is the count the first page reported" }) pagination: Pagination;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Pass as cursor (without page) for the next, older page; null on the last one' })
  nextCursor: string | null;
}

export class SubscriptionListResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: SubscriptionPage }) data: SubscriptionPage;
}

export class SubscriptionOneResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: SubscriptionResponse }) data: SubscriptionResponse;
}

export class SubscriptionMetricsData {
  @ApiProperty({ example: 40 }) total: number;
  @ApiProperty({ example: 31, description: 'ACTIVE plus TRIALING' }) active: number;
  @ApiProperty({ example: 6 }) cancelled: number;
  @ApiProperty({ example: 3 }) paused: number;
  @ApiProperty({ example: 3096.9, description: 'Reais: Σ amount × 30 / cycle days over ACTIVE and TRIALING' }) mrr: number;
  @ApiProperty({ example: 37162.8, description: 'Reais: mrr × 12' }) arr: number;
  @ApiProperty({ example: 3.13, description: 'Percent: cancelled in the last 30 days ÷ (active + those) × 100' }) churnRate: number;
}

export class SubscriptionMetricsResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: SubscriptionMetricsData }) data: SubscriptionMetricsData;
}

export class SubscriptionActionResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ example: 'Subscription paused' }) message: string;
  @ApiProperty({ example: { id: 17, status: 'PAUSED', pausedAt: '2026-11-23T10:00:00.000Z' } }) data: Record<string, unknown>;
}
