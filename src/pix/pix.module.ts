import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { LedgerModule } from '../ledger/ledger.module';
import { MetricsModule } from '../metrics/metrics.module';
import { PaymentsModule } from '../payments/payments.module';
import { ProvidersModule } from '../providers/providers.module';
import { SalesModule } from '../sales/sales.module';
import { PixAdminController } from './pix-admin.controller';
import { PixReceiptsRepository } from './pix-receipts.repository';
import { PixReceiptsService } from './pix-receipts.service';
import { PixReconciliationService } from './pix-reconciliation.service';
import { PixWebhookMiddleware } from './pix-webhook.middleware';
import { PixInboxWorker, PixScheduler } from './pix.scheduler';

/**
 * What comes from the PIX provider: the PSP's notifications (the webhook at API_PIX_WEBHOOK_URL's path,
 * served only with PIX_PROVIDER=api-pix; its /rec and /cobr only with Pix Automático configured), the Pix received applied or returned, reconciliation and its
 * report for the operator.
 */
@Module({
  imports: [PaymentsModule, SalesModule, LedgerModule, ProvidersModule, MetricsModule],
  controllers: [PixAdminController],
  providers: [PixReceiptsRepository, PixReceiptsService, PixReconciliationService, PixInboxWorker, PixScheduler, PixWebhookMiddleware],
})
export class PixModule implements NestModule {
  constructor(private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    const paths = this.config.apiPixWebhookPaths;
    if (paths) consumer.apply(PixWebhookMiddleware).forRoutes(...Object.values(paths).map((path) => ({ path, method: RequestMethod.POST })));
  }
}
