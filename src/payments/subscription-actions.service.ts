import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainError } from '../domain/domain-error';
import { addCycle } from '../domain/subscription-billing';
import { cancelledColumns, isStopped, onCalendar, SubscriptionColumns } from '../domain/subscription-outcome';
import { canMove, SubscriptionEvent } from '../domain/subscription-status';
import { SubscriptionEntity } from '../subscriptions/entities/subscription.entity';
import { assertOwnedSubscription } from '../subscriptions/subscriptions.service';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { AutomaticPixService } from './automatic-pix.service';
import { ChargesService } from './charges.service';
import { MoneyPipeline } from './money-pipeline';

/**
 * The seller's moves of a subscription (spec 4.9-4.11, the API and the dashboard): each a unit of work
 * of the money pipeline on the subscription locked and checked against the table of spec 3.2 (refused
 * in the spec 7.5 codes). A cancelled or paused subscription has its open charges cancelled in the same
 * unit, and its card charges in flight settled with the acquirer once it has committed.
 */
@Injectable()
export class SubscriptionActionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly charges: ChargesService,
    private readonly automaticPix: AutomaticPixService,
  ) {}

  /** Spec 4.9: ACTIVE or TRIALING only; ALREADY_PAUSED for a paused one, INVALID_STATUS otherwise. */
  async pause(sellerId: number, id: number, now = new Date()): Promise<{ id: number; status: string; pausedAt: string }> {
    const moved = await this.move(
      sellerId,
      id,
      'PAUSE',
      (s) => (s.status === 'PAUSED' ? 'ALREADY_PAUSED' : 'INVALID_STATUS'),
      () => ({ pausedAt: now, awaitingPaymentSince: null, pastDueSince: null, nextRetryAt: null }),
      now,
    );
    return { id: moved.id, status: moved.status, pausedAt: (moved.pausedAt as Date).toISOString() };
  }

  /** Spec 4.10: PAUSED only; the next billing date is recomputed from the resume date (resume + one cycle). */
  async resume(sellerId: number, id: number, now = new Date()): Promise<{ id: number; status: string; nextBillingDate: string; resumedAt: string }> {
    // A trial paused and resumed before its end still bills at its end; otherwise one cycle after the resume.
    const nextBilling = (s: SubscriptionEntity) => (s.trialEndsAt && s.trialEndsAt.getTime() > now.getTime() ? s.trialEndsAt : addCycle(now, s.billingCycle, onCalendar(s)));
    const moved = await this.move(sellerId, id, 'RESUME', () => 'INVALID_STATUS', (s) => ({ resumedAt: now, nextBillingDate: nextBilling(s) }), now);
    return { id: moved.id, status: moved.status, nextBillingDate: (moved.nextBillingDate as Date).toISOString(), resumedAt: now.toISOString() };
  }

  /** Spec 4.11: at once (CANCELLED) or at the end of the current period (a scheduled date, status unchanged). */
  async cancel(sellerId: number, id: number, reason: string | null, immediately: boolean, now = new Date()): Promise<Record<string, unknown>> {
    const refuse = (s: SubscriptionEntity) => (s.status === 'CANCELLED' ? 'ALREADY_CANCELLED' : 'INVALID_STATUS');
    const current = assertOwnedSubscription(await this.subscriptions.findById(id), sellerId, id);
    if (immediately || current.status === 'PENDING' || current.status === 'PAUSED') {
      // PENDING and PAUSED have no period running: a cancellation at the period end is a cancellation now.
      const moved = await this.move(sellerId, id, 'CANCEL', refuse, () => cancelledColumns(now, reason), now);
      return { id: moved.id, status: moved.status, cancelledAt: now.toISOString(), cancellationReason: reason };
    }
    return this.dataSource.transaction(async (manager) => {
      const subscription = assertOwnedSubscription(await this.subscriptions.findByIdForUpdate(id, manager), sellerId, id);
      if (!canMove(subscription.status, 'CANCEL')) throw new DomainError(refuse(subscription), `Subscription ${id} is ${subscription.status}`);
      const periodEnd = subscription.nextBillingDate ?? now;
      await this.subscriptions.update(id, { scheduledCancellationDate: periodEnd, cancellationReason: reason }, manager);
      return { id, status: subscription.status, scheduledCancellationDate: periodEnd.toISOString(), cancellationReason: reason };
    });
  }

  /** A move the seller asks for, as one unit of work; then, if it stopped the subscription, its charges in flight settled. */
  private async move(
    sellerId: number,
    id: number,
    event: SubscriptionEvent,
    refusal: (s: SubscriptionEntity) => 'ALREADY_PAUSED' | 'ALREADY_CANCELLED' | 'INVALID_STATUS',
    columns: (s: SubscriptionEntity) => SubscriptionColumns,
    now: Date,
  ): Promise<SubscriptionEntity> {
    const moved = await this.dataSource.transaction(async (manager) => {
      const subscription = assertOwnedSubscription(await this.subscriptions.findByIdForUpdate(id, manager), sellerId, id);
      if (!canMove(subscription.status, event)) {
        throw new DomainError(refusal(subscription), `Subscription ${id} is ${subscription.status}: it cannot ${event.toLowerCase()}`);
      }
      const done = await this.pipeline.write(manager, { subscriptions: [{ subscription, event, changes: columns(subscription) }] }, now);
      return done.subscriptions.get(id) as SubscriptionEntity;
    });
    if (isStopped(moved.status)) {
      await this.charges.settleChargesOfStopped([moved.id], now);
      if (moved.automaticPixStatus) await this.automaticPix.afterStop(moved.id, sellerId, now);
    }
    return moved;
  }
}
