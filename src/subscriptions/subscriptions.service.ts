import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { subscriptionMetrics, SubscriptionMetrics } from '../domain/subscription-billing';
import { SubscriptionListItem, SubscriptionResponse } from './dto/subscription.response';
import { SubscriptionQueryDto } from './dto/subscription-query.dto';
import { SubscriptionEntity } from './entities/subscription.entity';
import { toSubscription, toSubscriptionListItem } from './subscription.presenter';
import { SubscriptionsRepository } from './subscriptions.repository';

/**
 * The seller's subscriptions as read (spec 4.7, 4.8, 4.12). Subscriptions are opened, billed and moved
 * by the payments module (src/payments), the one owner of the money pipeline.
 */
@Injectable()
export class SubscriptionsService {
  constructor(private readonly subscriptions: SubscriptionsRepository) {}

  async list(sellerId: number, query: SubscriptionQueryDto): Promise<{ subscriptions: SubscriptionListItem[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate', { field: 'startDate' });
    }
    const { rows, total } = await this.subscriptions.page(
      sellerId,
      {
        status: query.status,
        search: query.search?.trim() || undefined,
        createdFrom: query.startDate ? addDays(endOfBrazilDay(query.startDate), -1) : undefined,
        createdBefore: query.endDate ? endOfBrazilDay(query.endDate) : undefined,
      },
      page,
      limit,
    );
    return { subscriptions: rows.map(toSubscriptionListItem), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  async get(sellerId: number, id: number): Promise<SubscriptionResponse> {
    return toSubscription(await this.owned(sellerId, id));
  }

  async metrics(sellerId: number, now = new Date()): Promise<SubscriptionMetrics> {
    return subscriptionMetrics(await this.subscriptions.metricsRows(sellerId), now);
  }

  private async owned(sellerId: number, id: number, manager?: EntityManager): Promise<SubscriptionEntity> {
    return assertOwnedSubscription(await this.subscriptions.findById(id, manager), sellerId, id);
  }
}

/** NOT_FOUND when absent, FORBIDDEN when another seller's (spec 7.5). */
export function assertOwnedSubscription(subscription: SubscriptionEntity | null, sellerId: number, id: number): SubscriptionEntity {
  if (!subscription) throw new DomainError('NOT_FOUND', `Subscription ${id} not found`);
  if (subscription.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Subscription ${id} belongs to another account`);
  return subscription;
}
