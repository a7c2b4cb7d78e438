import { Injectable } from '@nestjs/common';
import { SellerService } from '../seller/seller.service';
import { DomainError } from '../domain/domain-error';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';
import { NotificationsRepository } from './notifications.repository';

export interface WebhookView {
  id: number;
  url: string;
  type: 'WITHDRAWAL';
}

function toView(webhook: WithdrawalWebhookEntity): WebhookView {
  return { id: webhook.id, url: webhook.url, type: webhook.type };
}

@Injectable()
export class NotificationsService {
  constructor(
    private readonly notifications: NotificationsRepository,
    private readonly sellers: SellerService,
  ) {}

  async addWithdrawalWebhook(sellerId: number, url: string): Promise<WebhookView> {
    await this.sellers.assertExists(sellerId);
    return toView(await this.notifications.insertWebhook(sellerId, url));
  }

  async withdrawalWebhooks(sellerId: number): Promise<WebhookView[]> {
    await this.sellers.assertExists(sellerId);
    return (await this.notifications.webhooksOf(sellerId)).map(toView);
  }

  async removeWithdrawalWebhook(sellerId: number, webhookId: number): Promise<void> {
    if (!(await this.notifications.deleteWebhook(sellerId, webhookId))) {
      throw new DomainError('NOT_FOUND', `Seller ${sellerId} has no webhook ${webhookId}`);
    }
  }
}
