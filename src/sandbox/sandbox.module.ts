import { Module } from '@nestjs/common';
import { CashoutModule } from '../cashout/cashout.module';
import { PaymentsModule } from '../payments/payments.module';
import { ProvidersModule } from '../providers/providers.module';
import { SalesModule } from '../sales/sales.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { SandboxController } from './sandbox.controller';
import { SandboxPayerService } from './sandbox-payer.service';
import { SandboxRecordsService } from './sandbox-records.service';

@Module({
  imports: [PaymentsModule, CashoutModule, ProvidersModule, SalesModule, SubscriptionsModule],
  controllers: [SandboxController],
  providers: [SandboxPayerService, SandboxRecordsService],
})
export class SandboxModule {}
