import { ApiProperty } from '@nestjs/swagger';

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
}

export class Pagination {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 42 }) total: number;
  @ApiProperty({ example: 3 }) totalPages: number;
}

export class SubscriptionPage {
  @ApiProperty({ type: SubscriptionListItem, isArray: true }) subscriptions: SubscriptionListItem[];
  @ApiProperty({ type: Pagination }) pagination: Pagination;
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
