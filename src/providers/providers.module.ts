import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApiPixClient } from './api-pix/api-pix.client';
import { ApiPixAutomaticProvider } from './api-pix/api-pix-automatic.provider';
import { API_PIX, ApiPixProvider } from './api-pix/api-pix.provider';
import { ApiPixNotifications } from './api-pix/api-pix.notifications';
import { PROVIDER_ADAPTERS, ProviderAdapters, ProviderRegistry } from './provider-registry';
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
 * The providers this gateway can use, each by its name, gathered into the ProviderRegistry: the sandbox
 * (every port, in-process) and, when PIX_PROVIDER=api-pix, a PSP through the BCB's API Pix (PIX, and Pix
 * Automático once its receiving account is configured). A new provider is its folder here and one line
 * in PROVIDER_ADAPTERS' list.
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
      provide: PROVIDER_ADAPTERS,
      inject: [AppConfig, SandboxPaymentProvider, SandboxPixProvider, SandboxAutomaticPixProvider, SandboxPayoutProvider, ApiPixClient],
      useFactory: (
        config: AppConfig,
        card: SandboxPaymentProvider,
        pix: SandboxPixProvider,
        automaticPix: SandboxAutomaticPixProvider,
        payout: SandboxPayoutProvider,
        apiPix: ApiPixClient | null,
      ): ProviderAdapters[] => [
        { name: 'sandbox', card, boleto: card, pix, automaticPix, payout },
        ...(apiPix ? [apiPixAdapters(apiPix, config)] : []),
      ],
    },
    ProviderRegistry,
  ],
  exports: [ProviderRegistry, SandboxAutomaticPixProvider, SandboxPaymentsRecord, SandboxPaymentProvider, SandboxPayoutProvider],
})
export class ProvidersModule {}

/** The API Pix PSP's adapters: PIX, Pix Automático when its receiving account is configured, and its notifications. */
function apiPixAdapters(client: ApiPixClient, config: AppConfig): ProviderAdapters {
  const account = config.apiPix.receiverAccount;
  const pix = new ApiPixProvider(client, config.apiPix.receiverKey);
  const automaticPix = account ? new ApiPixAutomaticProvider(client, account) : null;
  return {
    name: API_PIX,
    pix,
    ...(automaticPix ? { automaticPix } : {}),
    notifications: new ApiPixNotifications(config.apiPix.webhookUrl, config.apiPix.inboxMax, pix, automaticPix),
  };
}
