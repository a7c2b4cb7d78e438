import { collectsAutomatically } from '../domain/automatic-pix';
import { RETRY_POLICY } from '../providers/automatic-pix.port';
import { AutomaticPixAuthorization, SubscriptionListItem, SubscriptionResponse } from './dto/subscription.response';
import { SubscriptionEntity } from './entities/subscription.entity';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** Spec 2.5: the subscription inside the creating sale's answer (the sales' DTO has the same shape). */
export interface SubscriptionSummary {
  id: number;
  status: string;
  billingCycle: string;
  amount: number;
  nextBillingDate: string | null;
  trialEndsAt: string | null;
  customerEmail: string;
  customerName: string;
}

export function toSaleSubscription(s: SubscriptionEntity): SubscriptionSummary {
  return {
    id: s.id,
    status: s.status,
    billingCycle: s.billingCycle,
    amount: s.amountCents,
    nextBillingDate: iso(s.nextBillingDate),
    trialEndsAt: iso(s.trialEndsAt),
    customerEmail: s.customerEmail,
    customerName: s.customerName,
  };
}

/** Spec 2.6 list item form. */
export function toSubscriptionListItem(s: SubscriptionEntity): SubscriptionListItem {
  return {
    ...toSaleSubscription(s),
    paymentMethod: s.paymentMethod,
    product: { id: s.productId, name: s.productName },
    createdAt: s.createdAt.toISOString(),
  };
}

/** Spec 2.6: the whole subscription (also the `data` of its postbacks). */
export function toSubscription(s: SubscriptionEntity): SubscriptionResponse {
  return {
    ...toSubscriptionListItem(s),
    startedAt: iso(s.startedAt),
    cancelledAt: iso(s.cancelledAt),
    customerDocument: s.customerDocument ?? '',
    customerPhone: s.customerPhone ?? '',
    lastPaymentDate: iso(s.lastPaymentDate),
    // Spec 2.6 types it a string: a subscription is created with its first charge PENDENTE.
    lastPaymentStatus: s.lastPaymentStatus ?? 'PENDENTE',
    totalBillings: s.totalBillings,
    successfulBillings: s.successfulBillings,
    failedBillings: s.failedBillings,
    refundedBillings: s.refundedBillings,
    metadata: { itemTitle: s.productName, customerPhone: s.customerPhone ?? '', ...s.metadata },
    scheduledCancellationDate: iso(s.scheduledCancellationDate),
    updatedAt: s.updatedAt.toISOString(),
    automaticPix: toAutomaticPix(s),
  };
}

/** The authorization of a Pix Automático subscription (issue 22), or null. */
function toAutomaticPix(s: SubscriptionEntity): AutomaticPixAuthorization | null {
  if (!s.automaticPixStatus || !s.automaticPixJourney) return null;
  return {
    status: s.automaticPixStatus,
    journey: s.automaticPixJourney,
    recurrenceId: s.automaticPixRecurrenceId,
    authorizedAt: iso(s.automaticPixAuthorizedAt),
    endedAt: iso(s.automaticPixEndedAt),
    endReason: s.automaticPixEndReason,
    renewals: collectsAutomatically(s.automaticPixStatus) ? 'AUTOMATIC' : s.automaticPixStatus === 'PENDING' ? 'AWAITING_AUTHORIZATION' : 'QR_PER_CYCLE',
    retryPolicy: RETRY_POLICY,
    maxAmount: s.amountCents,
    endDate: null,
  };
}
