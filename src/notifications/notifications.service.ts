import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { AppConfig } from '../config/app-config';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { postbackSignatureHeaders } from '../domain/postback-signature';
import { nextAttemptAt } from '../domain/retry-schedule';
import { SecretUnreadableError } from '../common/crypto/secrets';
import { SellerService } from '../seller/seller.service';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity';
import { DeliveryStatus, OutboxEventEntity } from './entities/outbox-event.entity';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';
import { postJson, SendResult } from './http-sender';
import { ManualSendsLimiter } from './manual-sends.limiter';
import { NewOutboxEvent, NotificationsRepository } from './notifications.repository';
import { resolveNotificationUrl, UrlRefusedError } from './url-safety';

/** A delivery counts when the receiver answers 2xx within this time (platform.md §5). */
export const DELIVERY_TIMEOUT_MS = 10_000;
const USER_AGENT = 'payment-gateway-notifications/1';

export interface WebhookView {
  id: number;
  url: string;
  type: 'WITHDRAWAL';
}

export interface StatusChange<T> {
  sellerId: number;
  /** The sale or subscription id. */
  resourceId: number;
  url: string;
  previousStatus: string | null;
  status: string;
  changedAt: Date;
  data: T;
}

export interface DeliveryView {
  id: number;
  eventId: string;
  channel: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: Record<string, unknown>;
  tries: Array<{ attemptedAt: string; responseStatus: number | null; error: string | null; durationMs: number }>;
}

function toWebhookView(webhook: WithdrawalWebhookEntity): WebhookView {
  return { id: webhook.id, url: webhook.url, type: webhook.type };
}

/**
 * Postbacks and withdrawal webhooks (spec §6, platform.md §5): written to the outbox inside the
 * transaction of the change they announce, then delivered at least once by the relay and processor.
 */
@Injectable()
export class NotificationsService {
  private readonly logger = new Logger(NotificationsService.name);

  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly sellers: SellerService,
    private readonly config: AppConfig,
    private readonly manualSends: ManualSendsLimiter,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The outbox's undelivered events and the age of the oldest (the operator's outbox lag). */
  pendingBacklog(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    return this.notifications.pendingBacklog();
  }

  /** A postbackUrl a sale may carry: http or https, and not to a private network (unless allowed). 400 otherwise. */
  async assertPostbackUrl(url: string, field = 'postbackUrl'): Promise<void> {
    try {
      await resolveNotificationUrl(url, this.config.postbackAllowPrivateNetworks);
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new RequestValidationError([], [{ field, message: `${field} ${error.message}` }]);
      // A host that does not resolve now may resolve later: accepted; each delivery resolves it again.
    }
  }

  /**
   * The postbacks of a unit of work (platform.md §5), in the caller's transaction and one statement:
   * transaction.status_changed for each sale change, refund.status_changed for each refund's,
   * subscription.status_changed for each subscription change, subscription.automatic_pix_changed for
   * each Pix Automático authorization's change, in that order.
   */
  async enqueueStatusChanges(
    manager: EntityManager,
    changes: StatusChanges,
  ): Promise<void> {
    const statement = new CteStatement();
    if (this.addStatusChanges(statement, changes, 'true') > 0) await statement.run(manager, 'SELECT 1');
  }

  /** The postbacks and events of these status changes added to `statement` (the one way they are written), written only while `gate` holds; how many. */
  addStatusChanges(statement: CteStatement, changes: StatusChanges, gate: string): number {
    const events = statusChangeEvents(changes);
    if (events.length > 0) this.notifications.addEvents(statement, events, gate);
    return events.length;
  }

  /** The withdrawal webhook of spec 6.2 to every webhook the seller configured, unsigned, in the caller's transaction. */
  async enqueueWithdrawalWebhooks(manager: EntityManager, sellerId: number, withdrawalId: number, payload: Record<string, unknown>): Promise<void> {
    const webhooks = await this.notifications.webhooksOfInTransaction(sellerId, manager);
    await this.notifications.insertEvents(
      webhooks.map((webhook) => ({
        eventId: randomUUID(),
        sellerId,
        channel: 'WITHDRAWAL_WEBHOOK' as const,
        aggregateKey: `withdrawal:${withdrawalId}:webhook:${webhook.id}`,
        url: webhook.url,
        signed: false,
        payload,
        eventType: 'withdrawal.status_changed',
        objectType: 'withdrawal' as const,
        objectId: withdrawalId,
        sequenced: false,
      })),
      manager,
    );
  }

  /**
   * One try at delivering an outbox event (the Bull processor calls this). Safe to run twice: the
   * outcome is recorded only if the event is still PENDING at the attempt that was tried.
   */
  async deliver(outboxId: string): Promise<void> {
    const event = await this.notifications.findEvent(outboxId);
    if (!event || event.status !== 'PENDING') return;
    const body = JSON.stringify(event.payload);
    let secrets: string[] = [];
    if (event.signed) {
      try {
        secrets = await this.sellers.postbackSecrets(event.sellerId);
      } catch (error) {
        // Reading the secret failed for now (a database error: its connection lost, a timeout): the event
        // stays PENDING and is handed over again. Found by the chaos run, where such a read made three
        // events FAILED for good.
        if (!(error instanceof SecretUnreadableError)) throw error;
        // No retry can sign it (the key that sealed the secret is gone): FAILED at once, with the reason,
        // so it never holds back the sale's later events; the operator rotates the secret and redelivers.
        const reason = `cannot sign: the postback secret cannot be decrypted (${(error as Error).message}); rotate it and redeliver`;
        await this.notifications.recordAttempt(
          event,
          { attemptedAt: new Date(), responseStatus: null, error: reason, durationMs: 0, requestHeaders: null },
          { status: 'FAILED', nextAttemptAt: null },
          this.failingAfterSeconds,
        );
        this.logger.error({ outboxId, sellerId: event.sellerId }, 'Postback not signed: its secret cannot be decrypted');
        return;
      }
    }
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      ...(event.signed ? postbackSignatureHeaders(secrets, event.eventId, body, Math.floor(Date.now() / 1000)) : {}),
    };
    const result = await this.send(event, body, headers);
    const delivered = result.responseStatus !== null && result.responseStatus >= 200 && result.responseStatus < 300;
    const error = delivered ? null : (result.error ?? `answered HTTP ${result.responseStatus}`);
    // A seller's redelivery of an event with no try left is this one try (issue 35, L4).
    const retryAt = delivered || event.manualTry ? null : nextAttemptAt(event.retryBaseAt, event.attempts + 1, this.config.postbackRetryScheduleSeconds);
    const status: DeliveryStatus = delivered ? 'DELIVERED' : retryAt ? 'PENDING' : 'FAILED';
    await this.notifications.recordAttempt(
      event,
      { attemptedAt: new Date(Date.now() - result.durationMs), responseStatus: result.responseStatus, error, durationMs: result.durationMs, requestHeaders: headers },
      { status, nextAttemptAt: retryAt },
      this.failingAfterSeconds,
    );
    if (status === 'FAILED') this.logger.warn({ outboxId, url: event.url, error }, 'Notification failed for good after its last retry');
  }

  /** How long an endpoint fails without a success before it is marked failing (POSTBACK_ENDPOINT_FAILING_DAYS). */
  private get failingAfterSeconds(): number {
    return this.config.postbackEndpointFailingDays * 86_400;
  }

  private async send(event: OutboxEventEntity, body: string, headers: Record<string, string>): Promise<SendResult> {
    let target;
    try {
      target = await resolveNotificationUrl(event.url, this.config.postbackAllowPrivateNetworks);
    } catch (error) {
      return { responseStatus: null, error: `refused: ${(error as Error).message}`, durationMs: 0 };
    }
    return postJson(target, body, headers, DELIVERY_TIMEOUT_MS);
  }

  /** Deletes delivered events (and their attempts) older than OUTBOX_RETENTION_DAYS, in batches. Returns how many went. */
  async purgeDelivered(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.config.outboxRetentionDays * 86_400_000);
    let purged = 0;
    for (;;) {
      const batch = await this.notifications.purgeDelivered(before, 1000);
      purged += batch;
      if (batch < 1000) return purged;
    }
  }

  /** The operator's view of a seller's deliveries, newest first, with every try. */
  async deliveries(sellerId: number, status: DeliveryStatus | undefined, limit: number): Promise<DeliveryView[]> {
    await this.sellers.assertExists(sellerId);
    const events = await this.notifications.eventsOf(sellerId, status, limit);
    const attempts = await this.notifications.attemptsOf(events.map((event) => event.id));
    const byEvent = new Map<string, DeliveryAttemptEntity[]>();
    for (const attempt of attempts) byEvent.set(String(attempt.outboxId), [...(byEvent.get(String(attempt.outboxId)) ?? []), attempt]);
    return events.map((event) => ({
      id: Number(event.id),
      eventId: event.eventId,
      channel: event.channel,
      url: event.url,
      status: event.status,
      attempts: event.attempts,
      nextAttemptAt: event.status === 'PENDING' ? event.nextAttemptAt.toISOString() : null,
      lastError: event.lastError,
      createdAt: event.createdAt.toISOString(),
      deliveredAt: event.deliveredAt?.toISOString() ?? null,
      payload: event.payload,
      tries: (byEvent.get(String(event.id)) ?? []).map((a) => ({
        attemptedAt: a.attemptedAt.toISOString(),
        responseStatus: a.responseStatus,
        error: a.error,
        durationMs: a.durationMs,
      })),
    }));
  }

  /**
   * The operator sends a delivery again (failed or not), with a fresh retry schedule, unlimited. Sellers
   * redeliver through EventsService, which counts in MANUAL_SENDS_PER_HOUR.
   */
  async redeliver(sellerId: number, deliveryId: number): Promise<void> {
    const event = await this.notifications.findEvent(String(deliveryId));
    if (!event || event.sellerId !== sellerId) throw new DomainError('NOT_FOUND', `Seller ${sellerId} has no delivery ${deliveryId}`);
    await this.notifications.requeue(event.id);
  }

  /** Adds a withdrawal webhook, up to WEBHOOKS_PER_SELLER_MAX per seller (409 CONFLICT past it, however many adds arrive at once). */
  async addWithdrawalWebhook(sellerId: number, url: string): Promise<WebhookView> {
    await this.sellers.assertExists(sellerId);
    await this.assertPostbackUrl(url, 'url');
    const max = this.config.notificationLimits.webhooksPerSeller;
    const webhook = await this.dataSource.transaction(async (manager) => {
      await this.notifications.lockWebhooksOf(sellerId, manager);
      if ((await this.notifications.countWebhooks(sellerId, manager)) >= max) {
        throw new DomainError('CONFLICT', `A seller can have at most ${max} withdrawal webhooks; remove one first`);
      }
      return this.notifications.insertWebhook(sellerId, url, manager);
    });
    return toWebhookView(webhook);
  }

  /**
   * Sends a test event to one of the seller's withdrawal webhooks, through the outbox like any other
   * delivery (tries, retries, log): the spec 6.2 body of a fictitious withdrawal (id 0) with `test: true`.
   * The seller asks for it: it counts in MANUAL_SENDS_PER_HOUR.
   */
  async sendTestWebhook(sellerId: number, webhookId: number): Promise<void> {
    const webhook = (await this.notifications.webhooksOf(sellerId)).find((candidate) => candidate.id === webhookId);
    if (!webhook) throw new DomainError('NOT_FOUND', `Seller ${sellerId} has no webhook ${webhookId}`);
    await this.manualSends.take(sellerId);
    const { user } = await this.sellers.withdrawalProfile(sellerId);
    const now = new Date().toISOString();
    await this.notifications.insertEvents([{
      eventId: randomUUID(),
      sellerId,
      channel: 'WITHDRAWAL_WEBHOOK',
      aggregateKey: `webhook-test:${webhook.id}`,
      url: webhook.url,
      signed: false,
      eventType: 'withdrawal.status_changed',
      objectType: null,
      objectId: null,
      sequenced: false,
      payload: {
        id: 0,
        userId: sellerId,
        amount: '0.00',
        pixKey: '',
        pixKeyType: 'CPF',
        status: 'COMPLETED',
        externalId: null,
        createdAt: now,
        updatedAt: now,
        processedAt: now,
        user,
        type: 'WITHDRAWAL',
        test: true,
      },
    }]);
  }

  async withdrawalWebhooks(sellerId: number): Promise<WebhookView[]> {
    await this.sellers.assertExists(sellerId);
    return (await this.notifications.webhooksOf(sellerId)).map(toWebhookView);
  }

  async removeWithdrawalWebhook(sellerId: number, webhookId: number): Promise<void> {
    if (!(await this.notifications.deleteWebhook(sellerId, webhookId))) {
      throw new DomainError('NOT_FOUND', `Seller ${sellerId} has no webhook ${webhookId}`);
    }
  }
}

/**
 * The outbox row of a signed postback (platform.md §5): `{id, type, previousStatus, status, changedAt, data}`,
 * and the object's `sequence`, added as it is written.
 */
/** What enqueueStatusChanges announces. */
export interface StatusChanges {
  sales?: Array<StatusChange<unknown>>;
  subscriptions?: Array<StatusChange<unknown>>;
  refunds?: Array<StatusChange<unknown> & { saleId: number }>;
  /** A Pix Automático authorization's change (previousStatus and status are the authorization's), after the subscription's own. */
  automaticPix?: Array<StatusChange<unknown>>;
}

function statusChangeEvents(changes: StatusChanges): NewOutboxEvent[] {
  return [
    ...(changes.sales ?? []).map((change) => postbackEvent('SALE_POSTBACK', 'transaction.status_changed', 'sale', change.resourceId, change)),
    // After the sale's own changes, on the sale's key and sequence: a receiver sees a refund and the sale's move in order.
    ...(changes.refunds ?? []).map((change) => postbackEvent('SALE_POSTBACK', 'refund.status_changed', 'sale', change.saleId, change)),
    ...(changes.subscriptions ?? []).map((change) => postbackEvent('SUBSCRIPTION_POSTBACK', 'subscription.status_changed', 'subscription', change.resourceId, change)),
    ...(changes.automaticPix ?? []).map((change) => postbackEvent('SUBSCRIPTION_POSTBACK', 'subscription.automatic_pix_changed', 'subscription', change.resourceId, change)),
  ];
}

function postbackEvent<T>(
  channel: 'SALE_POSTBACK' | 'SUBSCRIPTION_POSTBACK',
  type: string,
  objectType: 'sale' | 'subscription',
  objectId: number,
  change: StatusChange<T>,
): NewOutboxEvent {
  const eventId = randomUUID();
  return {
    eventId,
    sellerId: change.sellerId,
    channel,
    aggregateKey: `${objectType}:${objectId}`,
    url: change.url,
    signed: true,
    eventType: type,
    objectType,
    objectId,
    sequenced: true,
    payload: {
      id: eventId,
      type,
      previousStatus: change.previousStatus,
      status: change.status,
      changedAt: change.changedAt.toISOString(),
      data: change.data as unknown,
    },
  };
}
