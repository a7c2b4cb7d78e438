import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { EventDeliveryStatus, EventsQueryDto } from './dto/events.dto';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity';
import { DeliveryStatus, OutboxEventEntity } from './entities/outbox-event.entity';
import { EndpointHealthRow, EventFilter, NotificationsRepository } from './notifications.repository';
import { ManualSendsLimiter } from './manual-sends.limiter';

/** Events one bulk redelivery sends again at most (fewer when less is left of MANUAL_SENDS_PER_HOUR); the answer says how many are left for the next call. */
export const BULK_REDELIVERY_MAX = 1000;
const DAY_MS = 86_400_000;

export interface EventView {
  id: string;
  type: string;
  objectType: string | null;
  objectId: number | null;
  sequence: number | null;
  createdAt: string;
  url: string;
  deliveryStatus: EventDeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  lastError: string | null;
  payload: Record<string, unknown>;
}

export interface EventAttemptView {
  attemptedAt: string;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  requestHeaders: Record<string, string> | null;
}

export interface EndpointView {
  url: string;
  status: 'healthy' | 'failing';
  failingSince: string | null;
  failuresSince: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastError: string | null;
}

export interface EventsPage {
  events: EventView[];
  nextCursor: string | null;
}

const DELIVERY_STATUS: Record<EventDeliveryStatus, DeliveryStatus> = { pending: 'PENDING', delivered: 'DELIVERED', failed: 'FAILED' };

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

export function toEventView(event: OutboxEventEntity): EventView {
  return {
    id: event.eventId,
    type: event.eventType,
    objectType: event.objectType,
    objectId: event.objectId,
    sequence: event.sequence,
    createdAt: event.createdAt.toISOString(),
    url: event.url,
    deliveryStatus: event.status.toLowerCase() as EventDeliveryStatus,
    attempts: event.attempts,
    nextAttemptAt: event.status === 'PENDING' ? event.nextAttemptAt.toISOString() : null,
    deliveredAt: iso(event.deliveredAt),
    lastError: event.lastError,
    payload: event.payload,
  };
}

function toAttemptView(attempt: DeliveryAttemptEntity): EventAttemptView {
  return {
    attemptedAt: attempt.attemptedAt.toISOString(),
    responseStatus: attempt.responseStatus,
    error: attempt.error,
    durationMs: attempt.durationMs,
    requestHeaders: attempt.requestHeaders,
  };
}

/** An opaque cursor: the outbox id of the last event of a page. */
const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9]\d{0,17}$/.test(id)) throw new RequestValidationError([], [{ field: 'cursor', message: 'cursor must be the nextCursor of a previous page' }]);
  return id;
}

/**
 * The seller's events (every postback and withdrawal webhook the outbox holds, OUTBOX_RETENTION_DAYS at
 * least): the events API and the dashboard's deliveries view read and replay them here.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly manualSends: ManualSendsLimiter,
    private readonly config: AppConfig,
  ) {}

  /** A page of events, newest first; `nextCursor` continues after its last one. */
  async list(sellerId: number, query: EventsQueryDto): Promise<EventsPage> {
    if (query.objectId !== undefined && !query.objectType) {
      throw new RequestValidationError([], [{ field: 'objectType', message: 'objectType is required with objectId (sale, subscription or withdrawal)' }]);
    }
    const filter: EventFilter = {
      type: query.type,
      objectType: query.objectType,
      objectId: query.objectId,
      status: query.deliveryStatus ? DELIVERY_STATUS[query.deliveryStatus] : undefined,
      createdAfter: query.createdAfter ? new Date(query.createdAfter) : undefined,
      createdBefore: query.createdBefore ? new Date(query.createdBefore) : undefined,
    };
    const limit = query.limit ?? 20;
    const { rows, more } = await this.notifications.eventsPage(sellerId, filter, query.cursor ? decodeCursor(query.cursor) : null, limit);
    return { events: rows.map(toEventView), nextCursor: more ? encodeCursor(rows[rows.length - 1].id) : null };
  }

  /** One event with every delivery attempt and the headers each sent. */
  async get(sellerId: number, eventId: string): Promise<EventView & { deliveryAttempts: EventAttemptView[] }> {
    const event = await this.require(sellerId, eventId);
    const attempts = await this.notifications.attemptsOf([event.id]);
    return { ...toEventView(event), deliveryAttempts: attempts.map(toAttemptView) };
  }

  /**
   * Sends one event again now, with its own id (one of MANUAL_SENDS_PER_HOUR): a pending event's next
   * retry is brought forward, any other gets one try (no fresh retry schedule).
   */
  async redeliver(sellerId: number, eventId: string): Promise<EventView & { deliveryAttempts: EventAttemptView[] }> {
    const event = await this.require(sellerId, eventId);
    await this.manualSends.take(sellerId);
    await this.notifications.redeliverOnce(event.id);
    return this.get(sellerId, event.eventId);
  }

  /**
   * After an outage: every event whose latest try failed in [since, until) is sent again now, oldest
   * first, each once with its own id: a FAILED one gets one try, a PENDING one has its waiting retry
   * brought forward (not a second send beside it). Each event sent counts as one of
   * MANUAL_SENDS_PER_HOUR (a call that sends none counts one): at most the budget left and
   * BULK_REDELIVERY_MAX a call, `remaining` says how many wait for the next; 429 when nothing is left of
   * the budget. Events already due, in flight or delivered are not touched, so repeating the call sends
   * nothing twice.
   */
  async redeliverFailed(sellerId: number, since: Date, until: Date = new Date()): Promise<{ requeued: number; remaining: number }> {
    const oldest = Date.now() - this.config.outboxRetentionDays * DAY_MS;
    if (since.getTime() < oldest) {
      throw new RequestValidationError([], [
        { field: 'since', message: `since must be within the last ${this.config.outboxRetentionDays} days (OUTBOX_RETENTION_DAYS)` },
      ]);
    }
    if (until.getTime() <= since.getTime()) throw new RequestValidationError([], [{ field: 'until', message: 'until must be after since' }]);
    const budget = await this.manualSends.takeUpTo(sellerId, BULK_REDELIVERY_MAX);
    let used = 1;
    try {
      const result = await this.notifications.redeliverLatestFailed(sellerId, since, until, budget);
      used = Math.max(1, result.requeued);
      return result;
    } finally {
      await this.manualSends.giveBack(sellerId, budget - used);
    }
  }

  /** The seller's postback and webhook URLs: failing after POSTBACK_ENDPOINT_FAILING_DAYS of failures without a success. */
  async endpoints(sellerId: number): Promise<EndpointView[]> {
    return (await this.notifications.endpointsOf(sellerId)).map(toEndpointView);
  }

  private async require(sellerId: number, eventId: string): Promise<OutboxEventEntity> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(eventId)) {
      throw new RequestValidationError([], [{ field: 'id', message: 'id must be an event id (a UUID, the X-Event-Id of its deliveries)' }]);
    }
    const event = await this.notifications.findEventOf(sellerId, eventId.toLowerCase());
    if (!event) throw new DomainError('NOT_FOUND', `No event ${eventId} in this account`);
    return event;
  }
}

function toEndpointView(row: EndpointHealthRow): EndpointView {
  return {
    url: row.url,
    status: row.failingSince ? 'failing' : 'healthy',
    failingSince: iso(row.failingSince),
    failuresSince: iso(row.failuresSince),
    lastSuccessAt: iso(row.lastSuccessAt),
    lastFailureAt: iso(row.lastFailureAt),
    lastError: row.lastError,
  };
}
