import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PAYMENT_PROVIDER } from './payment-provider.port';
import { PAYOUT_PROVIDER } from './payout-provider.port';
import { SandboxPaymentProvider } from './sandbox/sandbox-payment.provider';
import { SandboxPayoutProvider } from './sandbox/sandbox-payout.provider';

/** Binds the provider ports to the adapters PAYMENT_PROVIDER names; `sandbox` is the only one so far. */
@Module({
  providers: [
    SandboxPaymentProvider,
    SandboxPayoutProvider,
    {
      provide: PAYMENT_PROVIDER,
      inject: [AppConfig, SandboxPaymentProvider],
      useFactory: (config: AppConfig, sandbox: SandboxPaymentProvider) => ({ sandbox })[config.paymentProvider],
    },
    {
      provide: PAYOUT_PROVIDER,
      inject: [AppConfig, SandboxPayoutProvider],
      useFactory: (config: AppConfig, sandbox: SandboxPayoutProvider) => ({ sandbox })[config.paymentProvider],
    },
  ],
  exports: [PAYMENT_PROVIDER, PAYOUT_PROVIDER],
})
export class ProvidersModule {}
