import { EnvironmentVariables } from './env.schema';

/** The rails whose provider is configured: each new record goes to its rail's provider. */
export type ProviderRail = 'PIX' | 'CARD' | 'BOLETO' | 'PAYOUT';

/** Development-only key for stored secrets, used when ENCRYPTION_KEY is unset (a warning is logged). */
export const DEVELOPMENT_ENCRYPTION_KEY = '5f0c8d0b1c9e4a7f8e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1';

/** Development-only session secret, used when SESSION_SECRET is unset (a warning is logged). */
const DEVELOPMENT_SESSION_SECRET = 'development-session-secret-do-not-use-in-production';

/** Typed access to the validated environment (config.module.ts builds it once per application). */
export class AppConfig {
  constructor(private readonly env: EnvironmentVariables) {}

  /** NODE_ENV=production: stricter configuration and a narrower public API reference. */
  get isProduction(): boolean {
    return this.env.NODE_ENV === 'production';
  }
  get port(): number {
    return this.env.PORT;
  }
  get databaseUrl(): string {
    return this.env.DATABASE_URL;
  }
  get redisUrl(): string {
    return this.env.REDIS_URL;
  }
  /** The operator token, or null when the operator API is off. */
  get adminToken(): string | null {
    return this.env.ADMIN_TOKEN ?? null;
  }
  /**
   * The provider each rail's new records go to (PIX_PROVIDER, CARD_PROVIDER, BOLETO_PROVIDER,
   * PAYOUT_PROVIDER; PAYMENT_PROVIDER sets card and boleto when theirs are unset). A record made before
   * keeps its own provider (ProviderRegistry).
   */
  get providers(): Record<ProviderRail, string> {
    const env = this.env;
    return {
      PIX: env.PIX_PROVIDER,
      CARD: env.CARD_PROVIDER ?? env.PAYMENT_PROVIDER ?? 'sandbox',
      BOLETO: env.BOLETO_PROVIDER ?? env.PAYMENT_PROVIDER ?? 'sandbox',
      PAYOUT: env.PAYOUT_PROVIDER,
    };
  }
  /** The sandbox is configured for some rail: its routes are served (outside production). */
  get sandboxConfigured(): boolean {
    return Object.values(this.providers).includes('sandbox');
  }
  get pixProvider(): 'sandbox' | 'api-pix' {
    return this.env.PIX_PROVIDER as 'sandbox' | 'api-pix';
  }
  /** The API Pix connection and its webhook and reconciliation (checked at boot when PIX_PROVIDER=api-pix). */
  get apiPix(): {
    baseUrl: string;
    tokenUrl: string;
    clientId: string;
    clientSecret: string;
    certFile: string;
    keyFile: string;
    caFile: string | null;
    receiverKey: string;
    webhookUrl: string;
    reconcileSeconds: number;
    returnsSweepSeconds: number;
    timeoutMs: number;
    /** Most ids waiting in each notification inbox (pix, rec, cobr); a notification beyond it is answered 503. */
    inboxMax: number;
    /** Pix Automático's receiving account (/cobr's recebedor); null: Pix Automático is off under api-pix. */
    receiverAccount: { conta: string; tipoConta: 'CORRENTE' | 'POUPANCA' | 'PAGAMENTO'; agencia?: string } | null;
  } {
    const env = this.env;
    return {
      baseUrl: env.API_PIX_BASE_URL ?? '',
      tokenUrl: env.API_PIX_TOKEN_URL ?? '',
      clientId: env.API_PIX_CLIENT_ID ?? '',
      clientSecret: env.API_PIX_CLIENT_SECRET ?? '',
      certFile: env.API_PIX_CERT_FILE ?? '',
      keyFile: env.API_PIX_KEY_FILE ?? '',
      caFile: env.API_PIX_CA_FILE ?? null,
      receiverKey: env.API_PIX_RECEIVER_KEY ?? '',
      webhookUrl: env.API_PIX_WEBHOOK_URL ?? '',
      reconcileSeconds: env.API_PIX_RECONCILE_SECONDS,
      returnsSweepSeconds: env.API_PIX_RETURNS_SWEEP_SECONDS,
      timeoutMs: env.API_PIX_TIMEOUT_MS,
      inboxMax: env.API_PIX_INBOX_MAX,
      receiverAccount: env.API_PIX_RECEIVER_ACCOUNT
        ? { conta: env.API_PIX_RECEIVER_ACCOUNT, tipoConta: env.API_PIX_RECEIVER_ACCOUNT_TYPE ?? 'CORRENTE', ...(env.API_PIX_RECEIVER_BRANCH ? { agencia: env.API_PIX_RECEIVER_BRANCH } : {}) }
        : null,
    };
  }
  /** Efí's Pix send (PAYOUT_PROVIDER=efi), on the API Pix connection. */
  get efi(): { sendVersion: 'v2' | 'v3'; sendIdPrefix: string; sendsAtOnce: number; resendAfterMs: number } {
    return { sendVersion: this.env.EFI_SEND_VERSION, sendIdPrefix: this.env.EFI_SEND_ID_PREFIX, sendsAtOnce: this.env.EFI_SENDS_AT_ONCE, resendAfterMs: this.env.EFI_RESEND_AFTER_SECONDS * 1000 };
  }
  /** Cielo's API E-commerce 3.0 (CARD_PROVIDER or BOLETO_PROVIDER=cielo; checked at boot then). */
  get cielo(): { merchantId: string; merchantKey: string; apiUrl: string; queryUrl: string; caFile: string | null; orderIdPrefix: string; timeoutMs: number; maxSockets: number; notFoundAfterSeconds: number } {
    const env = this.env;
    return {
      merchantId: env.CIELO_MERCHANT_ID ?? '',
      merchantKey: env.CIELO_MERCHANT_KEY ?? '',
      apiUrl: env.CIELO_API_URL ?? '',
      queryUrl: env.CIELO_QUERY_URL ?? '',
      caFile: env.CIELO_CA_FILE ?? null,
      orderIdPrefix: env.CIELO_ORDER_ID_PREFIX,
      timeoutMs: env.CIELO_TIMEOUT_MS,
      maxSockets: env.CIELO_MAX_SOCKETS,
      notFoundAfterSeconds: env.CIELO_NOT_FOUND_AFTER_SECONDS,
    };
  }
  /** Cielo's registered boletos (BOLETO_PROVIDER=cielo; checked at boot then); `bank` null: Cielo issues no boletos here. */
  get cieloBoleto(): { bank: 'Bradesco2' | 'BancoDoBrasil3' | 'Simulado' | null; assignor: string | null; instructions: string | null; demonstrative: string | null; clearingDays: number; pollSeconds: number; lateWatchDays: number } {
    const env = this.env;
    return {
      bank: env.CIELO_BOLETO_PROVIDER ?? null,
      assignor: env.CIELO_BOLETO_ASSIGNOR ?? null,
      instructions: env.CIELO_BOLETO_INSTRUCTIONS ?? null,
      demonstrative: env.CIELO_BOLETO_DEMONSTRATIVE ?? null,
      clearingDays: env.CIELO_BOLETO_CLEARING_DAYS,
      pollSeconds: env.CIELO_BOLETO_POLL_SECONDS,
      lateWatchDays: env.CIELO_BOLETO_LATE_WATCH_DAYS,
    };
  }
  /** Cielo's notification post (CIELO_NOTIFICATION_URL, its header and inbox), or null when none is configured. */
  get cieloNotifications(): { url: string; header: { name: string; value: string } | null; inboxMax: number } | null {
    const env = this.env;
    if (!env.CIELO_NOTIFICATION_URL) return null;
    const header = env.CIELO_NOTIFICATION_HEADER;
    const colon = header ? header.indexOf(':') : -1;
    return {
      url: env.CIELO_NOTIFICATION_URL,
      header: header ? { name: header.slice(0, colon).trim(), value: header.slice(colon + 1).trim() } : null,
      inboxMax: env.CIELO_INBOX_MAX,
    };
  }
  /** Cielo's 3-D Secure MPI (CIELO_3DS_*), or null when CIELO_3DS_URL is not set. */
  get cieloThreeDSecure(): { url: string; clientId: string; clientSecret: string; establishmentCode: string; merchantName: string; mcc: string; environment: 'SDB' | 'PRD' } | null {
    const env = this.env;
    if (!env.CIELO_3DS_URL) return null;
    return {
      url: env.CIELO_3DS_URL,
      clientId: env.CIELO_3DS_CLIENT_ID ?? '',
      clientSecret: env.CIELO_3DS_CLIENT_SECRET ?? '',
      establishmentCode: env.CIELO_3DS_ESTABLISHMENT_CODE ?? '',
      merchantName: env.CIELO_3DS_MERCHANT_NAME ?? '',
      mcc: env.CIELO_3DS_MCC ?? '',
      environment: env.CIELO_3DS_ENVIRONMENT ?? (new URL(env.CIELO_3DS_URL).hostname === 'mpi.braspag.com.br' ? 'PRD' : 'SDB'),
    };
  }
  /** Whether subscriptions can ask for Pix Automático: always in the sandbox; under api-pix once the receiving account is set. */
  get automaticPixAvailable(): boolean {
    return this.pixProvider === 'sandbox' || this.apiPix.receiverAccount !== null;
  }
  /** The path the PSP posts its notifications to (API_PIX_WEBHOOK_URL's path, then /pix), or null with the sandbox. */
  get apiPixWebhookPath(): string | null {
    return this.apiPixWebhookPaths?.pix ?? null;
  }
  /**
   * The paths the PSP calls under API_PIX_WEBHOOK_URL: received Pix, and, with Pix Automático configured
   * (API_PIX_RECEIVER_ACCOUNT), its recurrences and recurring charges. Only these are served.
   */
  get apiPixWebhookPaths(): { pix: string; rec?: string; cobr?: string } | null {
    if (this.pixProvider !== 'api-pix') return null;
    const base = new URL(this.apiPix.webhookUrl).pathname.replace(/\/+$/, '');
    return this.apiPix.receiverAccount ? { pix: `${base}/pix`, rec: `${base}/rec`, cobr: `${base}/cobr` } : { pix: `${base}/pix` };
  }
  /**
   * API_PIX_WEBHOOK_URL's last path segment (the unguessable one), or null with the sandbox: anyone who
   * has it can make the service call the PSP, so it is masked in every log line and metric label.
   */
  get apiPixWebhookSecret(): string | null {
    if (this.pixProvider !== 'api-pix') return null;
    return new URL(this.apiPix.webhookUrl).pathname.replace(/\/+$/, '').split('/').pop() ?? null;
  }
  /** The sandbox's clock may run the jobs ahead on records a real PSP holds (tests against a PSP only). */
  get sandboxClockMovesRealRecords(): boolean {
    return this.env.SANDBOX_CLOCK_MOVES_REAL_RECORDS;
  }
  get postbackAllowPrivateNetworks(): boolean {
    return this.env.POSTBACK_ALLOW_PRIVATE_NETWORKS;
  }
  /** Requests per second per key pair; 0 means no limit. */
  get rateLimitPerSecond(): number {
    return this.env.RATE_LIMIT_RPS;
  }
  get encryptionKey(): Buffer {
    return Buffer.from(this.env.ENCRYPTION_KEY ?? DEVELOPMENT_ENCRYPTION_KEY, 'hex');
  }
  /** ENCRYPTION_KEY to seal, with the earlier keys of ENCRYPTION_KEYS to open what they sealed. */
  get encryptionKeyring(): { current: Buffer; previous: Buffer[] } {
    const previous = (this.env.ENCRYPTION_KEYS ?? '').split(',').filter(Boolean).map((hex) => Buffer.from(hex, 'hex'));
    return { current: this.encryptionKey, previous };
  }
  get usesDevelopmentEncryptionKey(): boolean {
    return !this.env.ENCRYPTION_KEY;
  }
  get outboxPollMs(): number {
    return this.env.OUTBOX_POLL_MS;
  }
  get outboxStaleClaimSeconds(): number {
    return this.env.OUTBOX_STALE_CLAIM_SECONDS;
  }
  get queueLockDurationMs(): number {
    return this.env.QUEUE_LOCK_DURATION_MS;
  }
  get postbackRetryScheduleSeconds(): number[] {
    return this.env.POSTBACK_RETRY_SCHEDULE_SECONDS.split(',').map(Number);
  }
  /** Pool and session limits of the PostgreSQL connections (README, configuration). */
  get database(): {
    poolSize: number;
    acquireTimeoutMs: number;
    statementTimeoutMs: number;
    lockTimeoutMs: number;
    idleInTransactionTimeoutMs: number;
    guardNestedConnections: boolean;
  } {
    return {
      poolSize: this.env.DB_POOL_SIZE,
      acquireTimeoutMs: this.env.DB_POOL_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: this.env.DB_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: this.env.DB_LOCK_TIMEOUT_MS,
      idleInTransactionTimeoutMs: this.env.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      guardNestedConnections: this.env.DB_GUARD_NESTED_CONNECTIONS,
    };
  }
  /** Age (real clock) after which a record left between its two commits is resolved with the provider. */
  /** How often the janitor passes over pending provider operations. */
  get janitorSeconds(): number {
    return this.env.JANITOR_SECONDS;
  }
  get providerRecoveryAfterSeconds(): number {
    return this.env.PROVIDER_RECOVERY_AFTER_SECONDS;
  }
  /** The sandbox acquirer's latency before it records a charge, and before its answer arrives. */
  get sandboxChargeDelays(): { beforeRecordMs: number; beforeAnswerMs: number } {
    return { beforeRecordMs: this.env.SANDBOX_CHARGE_DELAY_MS, beforeAnswerMs: this.env.SANDBOX_CHARGE_ANSWER_DELAY_MS };
  }
  /** Dunning of subscriptions (platform.md §7): retry days after a failed renewal, and the grace period. */
  get subscriptionDunning(): { retryOffsetsDays: number[]; graceDays: number } {
    return { retryOffsetsDays: this.env.SUBSCRIPTION_RETRY_DAYS.split(',').map(Number), graceDays: this.env.SUBSCRIPTION_GRACE_DAYS };
  }
  /** Subscriptions billed at once by one instance's billing job (before the pool cap). */
  get billingConcurrency(): number {
    return this.env.BILLING_CONCURRENCY;
  }
  get outboxRetentionDays(): number {
    return this.env.OUTBOX_RETENTION_DAYS;
  }
  get postbackEndpointFailingDays(): number {
    return this.env.POSTBACK_ENDPOINT_FAILING_DAYS;
  }
  /** The value given to Express' `trust proxy`. */
  get trustProxy(): boolean | number | string {
    const value = this.env.TRUST_PROXY;
    if (value === 'false' || value === 'true') return value === 'true';
    return /^\d+$/.test(value) ? Number(value) : value;
  }
  get sessionSecret(): string {
    return this.env.SESSION_SECRET ?? DEVELOPMENT_SESSION_SECRET;
  }
  get usesDevelopmentSessionSecret(): boolean {
    return !this.env.SESSION_SECRET;
  }
  /** Base of the links the dashboard hands out (invitations). */
  get dashboardBaseUrl(): string {
    return this.env.DASHBOARD_BASE_URL ?? `http://localhost:${this.env.PORT}`;
  }
  /** Failed sign-ins allowed per account and per address within the window. */
  get loginLimits(): { perAccount: number; perAddress: number; windowSeconds: number } {
    return {
      perAccount: this.env.LOGIN_MAX_ATTEMPTS_PER_ACCOUNT,
      perAddress: this.env.LOGIN_MAX_ATTEMPTS_PER_ADDRESS,
      windowSeconds: this.env.LOGIN_ATTEMPTS_WINDOW_SECONDS,
    };
  }
  /** How far a seller can fan notifications out: webhooks held, and test events and redeliveries asked for per hour. */
  get notificationLimits(): { webhooksPerSeller: number; manualSendsPerHour: number } {
    return { webhooksPerSeller: this.env.WEBHOOKS_PER_SELLER_MAX, manualSendsPerHour: this.env.MANUAL_SENDS_PER_HOUR };
  }
  /** Seconds a verified key pair stays cached; 0 turns the cache off. */
  get apiKeyCacheSeconds(): number {
    return this.env.API_KEY_CACHE_SECONDS;
  }
  get logLevel(): string {
    return this.env.LOG_LEVEL;
  }
  get logFile(): string | undefined {
    return this.env.LOG_FILE;
  }
}
