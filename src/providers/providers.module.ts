import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PAYMENT_PROVIDER } from './payment-provider.port';
import { SandboxPaymentProvider } from './sandbox/sandbox-payment.provider';

/** Binds the provider ports to the adapter PAYMENT_PROVIDER names; `sandbox` is the only one so far. */
@Module({
  providers: [
    SandboxPaymentProvider,
    {
      provide: PAYMENT_PROVIDER,
      inject: [AppConfig, SandboxPaymentProvider],
      useFactory: (config: AppConfig, sandbox: SandboxPaymentProvider) => {
        const adapters = { sandbox };
        return adapters[config.paymentProvider];
      },
    },
  ],
  exports: [PAYMENT_PROVIDER],
})
export class ProvidersModule {}
