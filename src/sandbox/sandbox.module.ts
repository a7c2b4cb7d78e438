import { Module } from '@nestjs/common';
import { CashoutModule } from '../cashout/cashout.module';
import { PaymentsModule } from '../payments/payments.module';
import { SandboxController } from './sandbox.controller';

@Module({
  imports: [PaymentsModule, CashoutModule],
  controllers: [SandboxController],
})
export class SandboxModule {}
