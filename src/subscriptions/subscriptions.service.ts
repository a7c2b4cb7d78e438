import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { subscriptionMetrics, SubscriptionMetrics } from '../domain/subscription-billing';
import { SubscriptionPage, SubscriptionResponse } from './dto/subscription.response';
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

  /**
   * A page of the seller's subscriptions, newest first: the spec's `page` (an OFFSET, for shallow pages), or
   * after a previous page's `nextCursor` (an index range, whatever the depth). The first page counts the
   * matches; the cursor carries that total and the page number on, so that a deep page reads its rows only.
   */
  async list(sellerId: number, query: SubscriptionQueryDto): Promise<SubscriptionPage> {
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate', { field: 'startDate' });
    }
    if (query.cursor !== undefined && query.page !== undefined) {
      throw new DomainError('VALIDATION_ERROR', 'page and cursor cannot be used together', { field: 'cursor' });
    }
    const cursor = query.cursor !== undefined ? decodeCursor(query.cursor) : null;
    const page = cursor ? cursor.page + 1 : (query.page ?? 1);
    const { rows, more, total: counted } = await this.subscriptions.page(
      sellerId,
      {
        status: query.status,
        search: query.search?.trim() || undefined,
        createdFrom: query.startDate ? addDays(endOfBrazilDay(query.startDate), -1) : undefined,
        createdBefore: query.endDate ? endOfBrazilDay(query.endDate) : undefined,
      },
      cursor ? { beforeId: cursor.id } : { page },
      limit,
      cursor === null,
    );
    const total = counted ?? (cursor as PageCursor).total;
    return {
      subscriptions: rows.map(toSubscriptionListItem),
      pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
      nextCursor: more ? encodeCursor({ id: rows[rows.length - 1].id, page, total }) : null,
    };
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

/** Where the next page starts (below this id), its page number's predecessor, and the first page's total. */
interface PageCursor {
  id: number;
  page: number;
  total: number;
}

/** The cursor a client passes back: opaque (base64url of the last row's id, the page number and the total). */
function encodeCursor(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify([cursor.id, cursor.page, cursor.total])).toString('base64url');
}

function decodeCursor(text: string): PageCursor {
  try {
    const parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(parts) && parts.length === 3 && parts.every((n) => Number.isSafeInteger(n) && n >= 0) && parts[0] > 0 && parts[1] > 0) {
      const [id, page, total] = parts as number[];
      return { id, page, total };
    }
  } catch {
    // not a cursor of ours: refused below
  }
  throw new DomainError('VALIDATION_ERROR', 'cursor must be the nextCursor of a previous page', { field: 'cursor' });
}
