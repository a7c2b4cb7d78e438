import { OnQueueFailed, Process, Processor } from '@nestjs/bull';
import { Logger } from '@nestjs/common';
import { Job } from 'bull';
import { DELIVER_JOB, NOTIFICATIONS_QUEUE } from './notifications.relay';
import { NotificationsService } from './notifications.service';

/** Thin Bull consumer: one job, one delivery try. */
@Processor(NOTIFICATIONS_QUEUE)
export class NotificationsProcessor {
  private readonly logger = new Logger(NotificationsProcessor.name);

  constructor(private readonly notifications: NotificationsService) {}

  /** The outbox keeps the event; the relay enqueues it again once its claim goes stale. */
  @OnQueueFailed()
  failed(job: Job<{ outboxId: string }>, error: Error): void {
    this.logger.error({ err: error, outboxId: job.data.outboxId }, 'Notification job failed');
  }

  @Process({ name: DELIVER_JOB, concurrency: 10 })
  async deliver(job: Job<{ outboxId: string }>): Promise<void> {
    await this.notifications.deliver(job.data.outboxId);
  }
}
