import { readFileSync } from 'node:fs';
import { Module } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { REDIS_CLIENT } from '../redis/redis.module';
import { ApiPixClient } from './api-pix/api-pix.client';
import { ApiPixAutomaticProvider } from './api-pix/api-pix-automatic.provider';
import { API_PIX, ApiPixProvider } from './api-pix/api-pix.provider';
import { ApiPixNotifications } from './api-pix/api-pix.notifications';
import { CieloBoletoProvider } from './cielo/cielo-boleto.provider';
import { CIELO, CieloCardProvider } from './cielo/cielo-card.provider';
import { CieloClient } from './cielo/cielo.client';
import { CieloMpiClient } from './cielo/cielo-mpi.client';
import { CieloNotifications } from './cielo/cielo.notifications';
import { EFI, EfiPayoutProvider } from './efi/efi-payout.provider';
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
    pixSend: config.providers.PAYOUT === EFI,
  });
}

/** Cielo's client from the configuration (its CA file read once, at boot). */
function cieloClient(config: AppConfig): CieloClient {
  const settings = config.cielo;
  return new CieloClient({
    merchantId: settings.merchantId,
    merchantKey: settings.merchantKey,
    apiUrl: settings.apiUrl,
    queryUrl: settings.queryUrl,
    ca: settings.caFile ? readFileSync(settings.caFile) : null,
    timeoutMs: settings.timeoutMs,
    maxSockets: settings.maxSockets,
  });
}

/** Cielo's 3-D Secure MPI from the configuration (CIELO_3DS_*; trusted with CIELO_CA_FILE too), or null when not set. */
function cieloMpiClient(config: AppConfig): CieloMpiClient | null {
  const mpi = config.cieloThreeDSecure;
  if (!mpi) return null;
  return new CieloMpiClient({ ...mpi, ca: config.cielo.caFile ? readFileSync(config.cielo.caFile) : null, timeoutMs: config.cielo.timeoutMs, maxSockets: config.cielo.maxSockets });
}

/** Cielo's notification post, when CIELO_NOTIFICATION_URL is set. */
function cieloNotifications(config: AppConfig): { notifications?: CieloNotifications } {
  const settings = config.cieloNotifications;
  return settings ? { notifications: new CieloNotifications(settings.url, settings.inboxMax, settings.header) } : {};
}

/**
 * The providers this gateway can use, each by its name, gathered into the ProviderRegistry: the sandbox
 * (every port, in-process) and, when PIX_PROVIDER=api-pix, a PSP through the BCB's API Pix (PIX, and Pix
 * Automático once its receiving account is configured), and with PAYOUT_PROVIDER=efi that PSP's sends
 * (Efí's extension, on the same connection); with CARD_PROVIDER=cielo, card sales through Cielo's
 * API E-commerce 3.0 (and its 3-D Secure MPI, with CIELO_3DS_URL), with BOLETO_PROVIDER=cielo registered boletos through it. A new provider is its folder here and one line in PROVIDER_ADAPTERS' list.
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
      provide: CieloClient,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.providers.CARD === CIELO || config.providers.BOLETO === CIELO ? cieloClient(config) : null),
    },
    {
      provide: PROVIDER_ADAPTERS,
      inject: [AppConfig, SandboxPaymentProvider, SandboxPixProvider, SandboxAutomaticPixProvider, SandboxPayoutProvider, ApiPixClient, CieloClient, REDIS_CLIENT],
      useFactory: (
        config: AppConfig,
        card: SandboxPaymentProvider,
        pix: SandboxPixProvider,
        automaticPix: SandboxAutomaticPixProvider,
        payout: SandboxPayoutProvider,
        apiPix: ApiPixClient | null,
        cielo: CieloClient | null,
        redis: Redis,
      ): ProviderAdapters[] => {
        const efi = apiPix && config.providers.PAYOUT === EFI ? new EfiPayoutProvider(apiPix, { ...config.efi, payerKey: config.apiPix.receiverKey, timeoutMs: config.apiPix.timeoutMs }, redis) : null;
        return [
          { name: 'sandbox', card, boleto: card, pix, automaticPix, payout },
          ...(apiPix ? [apiPixAdapters(apiPix, config, efi)] : []),
          // Efí's send rides on the API Pix connection to the same PSP; its callbacks come on that webhook.
          ...(efi ? [{ name: EFI, payout: efi }] : []),
          ...(cielo ? [cieloAdapters(cielo, config)] : []),
        ];
      },
    },
    ProviderRegistry,
  ],
  exports: [ProviderRegistry, SandboxAutomaticPixProvider, SandboxPaymentsRecord, SandboxPaymentProvider, SandboxPayoutProvider],
})
export class ProvidersModule {}

/** Cielo's adapters: its cards (and their 3-D Secure MPI), its boletos when a bank contract is configured (CIELO_BOLETO_PROVIDER), its notifications. */
function cieloAdapters(client: CieloClient, config: AppConfig): ProviderAdapters {
  const settings = config.cielo;
  const boleto = config.cieloBoleto;
  return {
    name: CIELO,
    card: new CieloCardProvider(client, { orderIdPrefix: settings.orderIdPrefix, notFoundAfterSeconds: settings.notFoundAfterSeconds, timeoutMs: settings.timeoutMs }, cieloMpiClient(config)),
    ...(boleto.bank ? { boleto: new CieloBoletoProvider(client, { ...boleto, bank: boleto.bank, orderIdPrefix: settings.orderIdPrefix }) } : {}),
    ...cieloNotifications(config),
  };
}

/** The API Pix PSP's adapters: PIX, Pix Automático when its receiving account is configured, and its notifications (Efí's sends' too, when it pays out). */
function apiPixAdapters(client: ApiPixClient, config: AppConfig, efi: EfiPayoutProvider | null): ProviderAdapters {
  const account = config.apiPix.receiverAccount;
  const pix = new ApiPixProvider(client, config.apiPix.receiverKey);
  const automaticPix = account ? new ApiPixAutomaticProvider(client, account) : null;
  return {
    name: API_PIX,
    pix,
    ...(automaticPix ? { automaticPix } : {}),
    notifications: new ApiPixNotifications(
      config.apiPix.webhookUrl,
      config.apiPix.inboxMax,
      pix,
      automaticPix,
      efi ? { provider: EFI } : null,
    ),
  };
}
