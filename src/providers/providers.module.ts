import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApiPixClient } from './api-pix/api-pix.client';
import { ApiPixAutomaticProvider } from './api-pix/api-pix-automatic.provider';
import { ApiPixProvider } from './api-pix/api-pix.provider';
import { PAYMENT_PROVIDER } from './payment-provider.port';
import { PAYOUT_PROVIDER } from './payout-provider.port';
import { AUTOMATIC_PIX_PROVIDER } from './automatic-pix.port';
import { PIX_PROVIDER } from './pix-provider.port';
import { SandboxAutomaticPixProvider } from './sandbox/sandbox-automatic-pix.provider';
import { SandboxPaymentProvider } from './sandbox/sandbox-payment.provider';
import { SandboxPaymentsRecord } from './sandbox/sandbox-payments.record';
import { SandboxPayoutProvider } from './sandbox/sandbox-payout.provider';
import { SandboxPixProvider } from './sandbox/sandbox-pix.provider';

/** The API Pix client from the configuration (files read once, at boot), shared by the PIX and Pix Automático adapters. */
function apiPixClient(config: AppConfig): ApiPixClient {
  const settings = config.apiPix;
  return new ApiPixClient({
    baseUrl: settings.baseUrl,
    tokenUrl: settings.tokenUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    cert: readFileSync(settings.certFile),
    key: readFileSync(settings.keyFile),
    ca: settings.caFile ? readFileSync(settings.caFile) : null,
    timeoutMs: settings.timeoutMs,
    automaticPix: settings.receiverAccount !== null,
  });
}

/**
 * Binds the provider ports to their adapters: cards and boletos (PAYMENT_PROVIDER) and payouts are the
 * sandbox's; PIX (PIX_PROVIDER) is the sandbox's or a PSP's through the BCB's API Pix.
 */
@Module({
  providers: [
    SandboxPaymentProvider,
    SandboxPayoutProvider,
    SandboxPixProvider,
    SandboxAutomaticPixProvider,
    SandboxPaymentsRecord,
    {
      provide: ApiPixClient,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.pixProvider === 'api-pix' ? apiPixClient(config) : null),
    },
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
    {
      provide: PIX_PROVIDER,
      inject: [AppConfig, SandboxPixProvider, ApiPixClient],
      useFactory: (config: AppConfig, sandbox: SandboxPixProvider, client: ApiPixClient | null) =>
        client ? new ApiPixProvider(client, config.apiPix.receiverKey) : sandbox,
    },
    {
      // Pix Automático: the sandbox plays the payer's bank; under api-pix, the PSP (once its receiving account is configured).
      provide: AUTOMATIC_PIX_PROVIDER,
      inject: [AppConfig, SandboxAutomaticPixProvider, ApiPixClient],
      useFactory: (config: AppConfig, sandbox: SandboxAutomaticPixProvider, client: ApiPixClient | null) => {
        const account = config.apiPix.receiverAccount;
        return client && account ? new ApiPixAutomaticProvider(client, account) : sandbox;
      },
    },
  ],
  exports: [
    PAYMENT_PROVIDER,
    PAYOUT_PROVIDER,
    PIX_PROVIDER,
    AUTOMATIC_PIX_PROVIDER,
    SandboxAutomaticPixProvider,
    SandboxPaymentsRecord,
    SandboxPaymentProvider,
    SandboxPayoutProvider,
  ],
})
export class ProvidersModule {}
