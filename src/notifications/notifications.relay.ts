import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bull';
import { AppConfig } from '../config/app-config';
import { NotificationsRepository } from './notifications.repository';

export const NOTIFICATIONS_QUEUE = 'notifications';
export const DELIVER_JOB = 'deliver';
const BATCH = 100;

/**
 * Moves due outbox rows into the Bull queue every OUTBOX_POLL_MS. Job ids are deterministic
 * (outbox:<id>:<attempt>), so enqueuing one twice is harmless. If Redis is down the rows stay in the
 * outbox and go out once it is back: nothing is lost. A claimed event whose job has not finished after
 * OUTBOX_STALE_CLAIM_SECONDS is enqueued again (a job lost with Redis or with a killed process).
 */
@Injectable()
export class NotificationsRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(NotificationsRelay.name);
  private timer: NodeJS.Timeout | null = null;
  private running = false;

  constructor(
    private readonly notifications: NotificationsRepository,
    @InjectQueue(NOTIFICATIONS_QUEUE) private readonly queue: Queue,
    private readonly config: AppConfig,
  ) {
    // Without a listener a Redis outage would be an unhandled 'error' event and stop the process;
    // the outbox keeps every event meanwhile, and Bull reconnects by itself.
    this.queue.on('error', (error: Error) => this.logger.warn({ err: error }, 'Notifications queue cannot reach Redis'));
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.relay(), this.config.outboxPollMs);
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async relay(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      const due = await this.notifications.claimDue(BATCH, this.config.outboxStaleClaimSeconds);
      const failed: string[] = [];
      for (const event of due) {
        try {
          await this.queue.add(DELIVER_JOB, { outboxId: event.id }, { jobId: `outbox:${event.id}:${event.attempts}`, removeOnComplete: true, removeOnFail: true });
        } catch (error) {
          failed.push(event.id);
          this.logger.warn({ err: error, outboxId: event.id }, 'Could not enqueue a notification; it stays in the outbox');
        }
      }
      await this.notifications.releaseClaims(failed);
      return due.length - failed.length;
    } catch (error) {
      this.logger.warn({ err: error }, 'Notifications relay pass failed; retrying on the next tick');
      return 0;
    } finally {
      this.running = false;
    }
  }
}
