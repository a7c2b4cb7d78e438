import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { WithdrawalWebhookEntity } from './entities/withdrawal-webhook.entity';

@Injectable()
export class NotificationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get webhooks() {
    return this.dataSource.getRepository(WithdrawalWebhookEntity);
  }

  async insertWebhook(sellerId: number, url: string): Promise<WithdrawalWebhookEntity> {
    const { identifiers } = await this.webhooks.insert({ sellerId, url, type: 'WITHDRAWAL' });
    return this.webhooks.findOneByOrFail({ id: identifiers[0].id as number });
  }

  webhooksOf(sellerId: number): Promise<WithdrawalWebhookEntity[]> {
    return this.webhooks.find({ where: { sellerId }, order: { id: 'ASC' } });
  }

  /** Deletes the seller's webhook; false when the seller has no webhook with this id. */
  async deleteWebhook(sellerId: number, webhookId: number): Promise<boolean> {
    const result = await this.webhooks.delete({ id: webhookId, sellerId });
    return (result.affected ?? 0) > 0;
  }
}
