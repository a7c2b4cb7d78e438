import { maskPathSecrets } from '../common/path-secrets';
import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bull';
import { Pool } from 'pg';
import { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { PAYOUTS_QUEUE } from '../cashout/cashout.service';
import { NOTIFICATIONS_QUEUE } from '../notifications/notifications.relay';
import { CardNotificationsService } from '../payments/card-notifications.service';
import { NotificationsService } from '../notifications/notifications.service';
import { pgPool } from '../database/plain-rows';

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * What an operator watches under load, in the Prometheus text format (GET /metrics): request durations
 * per route template and status, the PostgreSQL pool (in use, idle, waiting), the outbox lag (age of
 * the oldest undelivered event) and the Bull queues' depth, plus node's process metrics. One registry
 * per application, so that several apps in one process (the e2e tests) never share counters.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly pixDifferences: Counter<'kind'>;
  /** Kept so that the counter lives as long as the registry; filled by its collect. */
  private readonly unknownPayments: Counter<'provider'>;
  /** The PSP webhook's secret path segment, shown as `:secret` in a route label; null with the sandbox. */
  private readonly webhookSecret: string | null;

  constructor(
    config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
    notifications: NotificationsService,
    @InjectQueue(NOTIFICATIONS_QUEUE) notificationsQueue: Queue,
    @InjectQueue(PAYOUTS_QUEUE) payoutsQueue: Queue,
    cardNotifications: CardNotificationsService,
  ) {
    this.webhookSecret = config.apiPixWebhookSecret;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the request to the end of its response, by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.pixDifferences = new Counter({
      name: 'pix_reconciliation_differences_total',
      help: "Differences between the PSP's records and the gateway's found by this instance: Pix that belonged to no payable sale (UNMATCHED, LATE, AMOUNT_MISMATCH, DUPLICATE), notifications of Pix the PSP does not have (FORGED_NOTIFICATION), returns the PSP did not make (RETURN_NOT_MADE); of Pix sent: notifications of payouts the provider does not have (FORGED_PAYOUT_NOTIFICATION), sends the gateway did not make (SEND_UNKNOWN), withdrawals COMPLETED the PSP does not list (PAYOUT_NOT_AT_PSP), another amount (PAYOUT_AMOUNT_MISMATCH), a status that disagrees (PAYOUT_STATUS_MISMATCH)",
      labelNames: ['kind'],
      registers,
    });
    const counted = new Map<string, number>();
    this.unknownPayments = new Counter({
      name: 'acquirer_notifications_unknown_total',
      help: "Notifications of an acquirer (Cielo's post) naming a payment that is no card or boleto sale of ours at that acquirer (forged, another store's, or unknown to it): nothing was done",
      labelNames: ['provider'],
      registers,
      // Counted where the notification is handled (CardNotificationsService), brought here at each scrape.
      collect(this: Counter<'provider'>) {
        for (const [provider, total] of cardNotifications.unknownPayments) {
          this.inc({ provider }, total - (counted.get(provider) ?? 0));
          counted.set(provider, total);
        }
      },
    });
    // Undefined until the data source has connected.
    const pool = (): Pool | undefined => pgPool(dataSource);
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state (in_use, idle) and the pool maximum (max)',
      labelNames: ['state'],
      registers,
      collect() {
        const p = pool();
        if (!p) return;
        this.set({ state: 'in_use' }, p.totalCount - p.idleCount);
        this.set({ state: 'idle' }, p.idleCount);
        this.set({ state: 'max' }, p.options.max);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Units of work waiting for a PostgreSQL connection',
      registers,
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
    new Gauge({
      name: 'outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest postback or webhook not yet delivered (0 when none): the outbox lag',
      registers,
      async collect() {
        this.set((await notifications.pendingBacklog()).oldestAgeSeconds);
      },
    });
    new Gauge({
      name: 'outbox_pending_events',
      help: 'Postbacks and webhooks not yet delivered',
      registers,
      async collect() {
        this.set((await notifications.pendingBacklog()).pending);
      },
    });
    const queues = [notificationsQueue, payoutsQueue];
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in each Bull queue by state',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        for (const queue of queues) {
          const counts = await queue.getJobCounts().catch(() => null); // Redis down: no figure rather than a failed scrape
          if (!counts) continue;
          for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state]);
        }
      },
    });
  }

  /**
   * Express middleware: observes each request's duration under its route template (never the raw URL).
   * The PSP webhook's routes are literal paths holding its secret segment: their label says `:secret`.
   */
  requestTimer(): (request: Request, response: Response, next: NextFunction) => void {
    const secret = this.webhookSecret;
    const label = (route: string): string => maskPathSecrets(secret && route.includes(secret) ? route.split(secret).join(':secret') : route, ':secret');
    return (request, response, next) => {
      const end = this.requestDuration.startTimer();
      response.once('finish', () => {
        const route = request.route as { path?: string } | undefined;
        end({ method: request.method, route: route?.path ? label(`${request.baseUrl}${route.path}`) : 'unmatched', status: String(response.statusCode) });
      });
      next();
    };
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** One difference with the PSP found (reconciliation, a notification, a return). */
  countPixDifference(kind: string): void {
    this.pixDifferences.inc({ kind });
  }

}
