import { Module } from '@nestjs/common';
import { CashoutModule } from '../cashout/cashout.module';
import { SalesModule } from '../sales/sales.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { SandboxController } from './sandbox.controller';

@Module({
  imports: [SalesModule, CashoutModule, SubscriptionsModule],
  controllers: [SandboxController],
})
export class SandboxModule {}
