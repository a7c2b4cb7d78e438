import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SellerModule } from '../seller/seller.module';
import { DeliveryAttemptEntity } from './entities/delivery-attempt.entity';
import { ManualSendsLimiter } from './manual-sends.limiter';
import { OutboxEventEntity } from './entities/outbox-event.entity';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { NotificationsController } from './notifications.controller';
import { NotificationsProcessor } from './notifications.processor';
import { NOTIFICATIONS_QUEUE, NotificationsRelay } from './notifications.relay';
import { NotificationsRepository } from './notifications.repository';
import { NotificationsScheduler } from './notifications.scheduler';
import { NotificationsService } from './notifications.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([WithdrawalWebhookEntity, OutboxEventEntity, DeliveryAttemptEntity]),
    BullModule.registerQueue({ name: NOTIFICATIONS_QUEUE }),
    SellerModule,
  ],
  controllers: [NotificationsController, EventsController],
  providers: [NotificationsService, EventsService, NotificationsRepository, ManualSendsLimiter, NotificationsRelay, NotificationsProcessor, NotificationsScheduler],
  // The queue is exported for the operator's metrics (its depth).
  exports: [NotificationsService, EventsService, BullModule],
})
export class NotificationsModule {}
