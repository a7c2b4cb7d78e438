import { Module } from '@nestjs/common';
import { IntakeModule } from '../intake/intake.module';
import { LedgerModule } from '../ledger/ledger.module';
import { MetricsModule } from '../metrics/metrics.module';
import { PaymentsModule } from '../payments/payments.module';
import { ProvidersModule } from '../providers/providers.module';
import { CashoutModule } from '../cashout/cashout.module';
import { SentPixService } from './sent-pix.service';
import { SalesModule } from '../sales/sales.module';
import { PixAdminController } from './pix-admin.controller';
import { PixReceiptsRepository } from './pix-receipts.repository';
import { PixReceiptsService } from './pix-receipts.service';
import { PixReconciliationService } from './pix-reconciliation.service';
import { PixScheduler } from './pix.scheduler';

/**
 * What comes from the API Pix PSP: the Pix it reports (notified through the one intake, src/intake, or
 * found by reconciliation) applied or returned, reconciliation and its report for the operator.
 */
@Module({
  imports: [PaymentsModule, SalesModule, LedgerModule, ProvidersModule, MetricsModule, IntakeModule, CashoutModule],
  controllers: [PixAdminController],
  providers: [PixReceiptsRepository, PixReceiptsService, PixReconciliationService, PixScheduler, SentPixService],
})
export class PixModule {}
