import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApiPixClient } from './api-pix/api-pix.client';
import { ApiPixProvider } from './api-pix/api-pix.provider';
import { PAYMENT_PROVIDER } from './payment-provider.port';
import { PAYOUT_PROVIDER } from './payout-provider.port';
import { AUTOMATIC_PIX_PROVIDER } from './automatic-pix.port';
import { PIX_PROVIDER } from './pix-provider.port';
import { SandboxAutomaticPixProvider } from './sandbox/sandbox-automatic-pix.provider';
import { SandboxPaymentProvider } from './sandbox/sandbox-payment.provider';
import { SandboxPayoutProvider } from './sandbox/sandbox-payout.provider';
import { SandboxPixProvider } from './sandbox/sandbox-pix.provider';

/** The API Pix adapter from the configuration (files read once, at boot). */
function apiPixProvider(config: AppConfig): ApiPixProvider {
  const settings = config.apiPix;
  const client = new ApiPixClient({
    baseUrl: settings.baseUrl,
    tokenUrl: settings.tokenUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    cert: readFileSync(settings.certFile),
    key: readFileSync(settings.keyFile),
    ca: settings.caFile ? readFileSync(settings.caFile) : null,
    timeoutMs: settings.timeoutMs,
  });
  return new ApiPixProvider(client, settings.receiverKey);
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
      inject: [AppConfig, SandboxPixProvider],
      useFactory: (config: AppConfig, sandbox: SandboxPixProvider) => (config.pixProvider === 'api-pix' ? apiPixProvider(config) : sandbox),
    },
    {
      // Pix Automático: the sandbox plays the payer's bank (the API Pix adapter joins with the webhooks of /rec and /cobr).
      provide: AUTOMATIC_PIX_PROVIDER,
      useExisting: SandboxAutomaticPixProvider,
    },
  ],
  exports: [PAYMENT_PROVIDER, PAYOUT_PROVIDER, PIX_PROVIDER, AUTOMATIC_PIX_PROVIDER, SandboxAutomaticPixProvider],
})
export class ProvidersModule {}
