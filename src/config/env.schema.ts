import { readFileSync } from 'node:fs';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import { isPixKey } from '../domain/pix-key';

const toBoolean = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : value === 'true' ? true : value === 'false' ? false : value;
const toInteger = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toNumber = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^\d+(\.\d+)?$/.test(String(value)) ? Number(value) : value;
/** An https URL without a trailing slash. */
const HTTPS_URL = /^https:\/\/[^\s/?#]+(\/[^\s?#]*[^\s?#/])?$/;
/** A provider's name in the registry and on every record it holds. */
const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** The service's environment (platform.md §1). Each variable is checked at boot; defaults are for local work. */
export class EnvironmentVariables {
  @Transform(toInteger)
  @IsInt({ message: 'PORT must be an integer between 1 and 65535' })
  @Min(1, { message: 'PORT must be an integer between 1 and 65535' })
  @Max(65535, { message: 'PORT must be an integer between 1 and 65535' })
  PORT = 3000;

  @Transform(emptyToUndefined)
  @Matches(/^postgres(ql)?:\/\/[^/]+\/[A-Za-z0-9_]+(\?.*)?$/, {
    message: 'DATABASE_URL must look like postgres://user@host:5432/database',
  })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/payment_gateway';

  @Transform(emptyToUndefined)
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must look like redis://host:6379' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** Operator API token; the /admin routes answer 404 while it is unset. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'ADMIN_TOKEN must be at least 16 characters long' })
  ADMIN_TOKEN?: string;

  /** Alias of CARD_PROVIDER and BOLETO_PROVIDER together (each of those, when set, wins). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(PROVIDER_NAME, { message: 'PAYMENT_PROVIDER must be a provider name (lower-case letters, digits and -), e.g. sandbox' })
  PAYMENT_PROVIDER?: string;

  /** Who takes new card sales (the provider registry checks at boot that it has a card adapter of that name). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(PROVIDER_NAME, { message: 'CARD_PROVIDER must be a provider name (lower-case letters, digits and -), e.g. sandbox' })
  CARD_PROVIDER?: string;

  /** Who issues new boletos (and takes transfers). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(PROVIDER_NAME, { message: 'BOLETO_PROVIDER must be a provider name (lower-case letters, digits and -), e.g. sandbox' })
  BOLETO_PROVIDER?: string;

  /** Who pays new withdrawals out. */
  @Transform(emptyToUndefined)
  @Matches(PROVIDER_NAME, { message: 'PAYOUT_PROVIDER must be a provider name (lower-case letters, digits and -), e.g. sandbox' })
  PAYOUT_PROVIDER = 'sandbox';

  /** Who issues PIX charges and receives the Pix: the sandbox, or a PSP through the BCB's API Pix (the API_PIX_* variables). */
  @Transform(emptyToUndefined)
  @IsIn(['sandbox', 'api-pix'], { message: 'PIX_PROVIDER must be one of: sandbox, api-pix' })
  PIX_PROVIDER = 'sandbox';

  /** The PSP's API Pix base, e.g. https://psp.example/v2 (no trailing slash). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(HTTPS_URL, { message: 'API_PIX_BASE_URL must be an https URL without a trailing slash, e.g. https://psp.example/v2' })
  API_PIX_BASE_URL?: string;

  /** The PSP's OAuth 2.0 token endpoint (client credentials, over mutual TLS). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(HTTPS_URL, { message: 'API_PIX_TOKEN_URL must be an https URL, e.g. https://psp.example/oauth/token' })
  API_PIX_TOKEN_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_CLIENT_ID?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_CLIENT_SECRET?: string;

  /** PEM files: the client certificate and its key (mutual TLS), and optionally the CA bundle that signed the PSP's certificate. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_CERT_FILE?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_KEY_FILE?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_CA_FILE?: string;

  /** The platform's Pix key at the PSP: every charge is paid to it. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_RECEIVER_KEY?: string;

  /** The public URL the PSP notifies (its last path segment unguessable); the service serves POST <its path>/pix. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  API_PIX_WEBHOOK_URL?: string;

  /**
   * Pix Automático (optional): the platform's account at the PSP that recurring charges credit
   * (/cobr's recebedor). Without it, sales asking for subscription.automaticPix are refused under api-pix.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9A-Za-z-]{1,20}$/, { message: 'API_PIX_RECEIVER_ACCOUNT must be the account number at the PSP: 1 to 20 letters, digits or -' })
  API_PIX_RECEIVER_ACCOUNT?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(['CORRENTE', 'POUPANCA', 'PAGAMENTO'], { message: 'API_PIX_RECEIVER_ACCOUNT_TYPE must be CORRENTE, POUPANCA or PAGAMENTO' })
  API_PIX_RECEIVER_ACCOUNT_TYPE?: 'CORRENTE' | 'POUPANCA' | 'PAGAMENTO';

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^\d{1,4}$/, { message: 'API_PIX_RECEIVER_BRANCH must be the branch (agência): 1 to 4 digits' })
  API_PIX_RECEIVER_BRANCH?: string;

  /** How often the Pix received at the PSP are compared with the gateway's (a lost notification is applied within it). */
  @Transform(toInteger)
  @IsInt({ message: 'API_PIX_RECONCILE_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'API_PIX_RECONCILE_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'API_PIX_RECONCILE_SECONDS must be a whole number of seconds, 1 to 86400' })
  API_PIX_RECONCILE_SECONDS = 60;

  /**
   * How often reconciliation also lists, over the last 120 days, the Pix that carry a return, so that a
   * return the PSP made on its own (a MED's, days after its Pix) is booked even when its notification is lost.
   */
  @Transform(toInteger)
  @IsInt({ message: 'API_PIX_RETURNS_SWEEP_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'API_PIX_RETURNS_SWEEP_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'API_PIX_RETURNS_SWEEP_SECONDS must be a whole number of seconds, 1 to 86400' })
  API_PIX_RETURNS_SWEEP_SECONDS = 900;

  /**
   * Most ids waiting to be checked with the PSP in each notification inbox (Pix received, Pix Automático's
   * recurrences, its recurring charges): a notification that would take one past it is answered 503, and
   * the PSP sends it again (reconciliation and the polling jobs find meanwhile what it names).
   */
  @Transform(toInteger)
  @IsInt({ message: 'API_PIX_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  @Min(100, { message: 'API_PIX_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  @Max(1_000_000, { message: 'API_PIX_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  API_PIX_INBOX_MAX = 1000;

  /** Longest wait for one answer of the PSP before the call is retried. */
  @Transform(toInteger)
  @IsInt({ message: 'API_PIX_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  @Min(100, { message: 'API_PIX_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  @Max(60_000, { message: 'API_PIX_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  API_PIX_TIMEOUT_MS = 10_000;

  /**
   * PAYOUT_PROVIDER=efi: the version segment of Efí's send path (PUT /v3/gn/pix/{idEnvio}; /v2 in its
   * older docs and SDKs). The look-ups and the list stay under /v2 (docs/going-live.md).
   */
  @Transform(emptyToUndefined)
  @IsIn(['v2', 'v3'], { message: 'EFI_SEND_VERSION must be v2 or v3' })
  EFI_SEND_VERSION: 'v2' | 'v3' = 'v3';

  /** PAYOUT_PROVIDER=efi: the letters every idEnvio starts with, before the withdrawal's id (so that the gateway's sends are told from others of the account). */
  @Transform(emptyToUndefined)
  @Matches(/^[A-Za-z][A-Za-z0-9]{0,19}$/, { message: 'EFI_SEND_ID_PREFIX must be 1 to 20 letters or digits, starting with a letter' })
  EFI_SEND_ID_PREFIX = 'GWSAQUE';

  /** PAYOUT_PROVIDER=efi: how many sends may be on their way at once, across every instance (Efí asks for one at a time: simultaneous sends may fail on the balance). */
  @Transform(toInteger)
  @IsInt({ message: 'EFI_SENDS_AT_ONCE must be a whole number, 1 to 20' })
  @Min(1, { message: 'EFI_SENDS_AT_ONCE must be a whole number, 1 to 20' })
  @Max(20, { message: 'EFI_SENDS_AT_ONCE must be a whole number, 1 to 20' })
  EFI_SENDS_AT_ONCE = 1;

  /**
   * PAYOUT_PROVIDER=efi: the least time between two sends of one withdrawal. A send whose answer did not
   * come is looked up by its idEnvio and sent again only when Efí shows nothing under it this long after
   * the last send, so a refusal of the new send is never a clash with an earlier one still on its way.
   * Longer than API_PIX_TIMEOUT_MS.
   */
  @Transform(toInteger)
  @IsInt({ message: 'EFI_RESEND_AFTER_SECONDS must be a whole number of seconds, 1 to 3600' })
  @Min(1, { message: 'EFI_RESEND_AFTER_SECONDS must be a whole number of seconds, 1 to 3600' })
  @Max(3600, { message: 'EFI_RESEND_AFTER_SECONDS must be a whole number of seconds, 1 to 3600' })
  EFI_RESEND_AFTER_SECONDS = 60;

  /**
   * CARD_PROVIDER=cielo, debit's 3-D Secure 2.2 (POST /api/cards/3ds-token): Cielo's MPI host,
   * https://mpisandbox.braspag.com.br or https://mpi.braspag.com.br. With it, every CIELO_3DS_* but the
   * environment is required; without it the token endpoint answers 422 NOT_SUPPORTED (debit sales still
   * go through with a result from the seller's own MPI).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(HTTPS_URL, { message: 'CIELO_3DS_URL must be an https URL without a trailing slash, e.g. https://mpi.braspag.com.br' })
  CIELO_3DS_URL?: string;

  /** The MPI's ClientId (Cielo's site, "Credenciais"). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[!-~]{1,100}$/, { message: 'CIELO_3DS_CLIENT_ID must be the MPI ClientId (printable characters, no spaces)' })
  CIELO_3DS_CLIENT_ID?: string;

  /** The MPI's ClientSecret, a secret. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[!-~]{1,200}$/, { message: 'CIELO_3DS_CLIENT_SECRET must be the MPI ClientSecret (printable characters, no spaces)' })
  CIELO_3DS_CLIENT_SECRET?: string;

  /** The store's 10-digit establishment code (EC) at Cielo. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9]{10}$/, { message: 'CIELO_3DS_ESTABLISHMENT_CODE must be the 10-digit establishment code (EC)' })
  CIELO_3DS_ESTABLISHMENT_CODE?: string;

  /** The store's name as the MPI shows it, up to 25 characters. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^\P{Cc}{1,25}$/u, { message: 'CIELO_3DS_MERCHANT_NAME must be 1 to 25 characters' })
  CIELO_3DS_MERCHANT_NAME?: string;

  /** The store's merchant category code, 4 digits. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9]{4}$/, { message: 'CIELO_3DS_MCC must be the 4-digit merchant category code' })
  CIELO_3DS_MCC?: string;

  /** bpmpi_config's Environment for the page: SDB (sandbox) or PRD; by default PRD only for https://mpi.braspag.com.br. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIn(['SDB', 'PRD'], { message: 'CIELO_3DS_ENVIRONMENT must be SDB or PRD' })
  CIELO_3DS_ENVIRONMENT?: 'SDB' | 'PRD';

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: the store's id at Cielo (the MerchantId header, a GUID). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, { message: 'CIELO_MERCHANT_ID must be the MerchantId Cielo gave the store: a GUID' })
  CIELO_MERCHANT_ID?: string;

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: the store's key at Cielo (the MerchantKey header), a secret. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[!-~]{1,100}$/, { message: 'CIELO_MERCHANT_KEY must be the MerchantKey Cielo gave the store (printable characters, no spaces)' })
  CIELO_MERCHANT_KEY?: string;

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: the transactional host (sales, captures, voids), e.g. https://api.cieloecommerce.cielo.com.br. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(HTTPS_URL, { message: 'CIELO_API_URL must be an https URL without a trailing slash, e.g. https://api.cieloecommerce.cielo.com.br' })
  CIELO_API_URL?: string;

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: the query host (look-ups by PaymentId and by MerchantOrderId), e.g. https://apiquery.cieloecommerce.cielo.com.br. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(HTTPS_URL, { message: 'CIELO_QUERY_URL must be an https URL without a trailing slash, e.g. https://apiquery.cieloecommerce.cielo.com.br' })
  CIELO_QUERY_URL?: string;

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: a PEM bundle of the CAs to trust Cielo's hosts with (unset: the system's). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  CIELO_CA_FILE?: string;

  /**
   * CARD_PROVIDER or BOLETO_PROVIDER=cielo: the letters every MerchantOrderId starts with, before the sale's id (so that the
   * gateway's sales are told from others of the store, another environment's on the same MerchantId
   * among them: a look-up by MerchantOrderId must find only this gateway's). Kept within Cielo's 20.
   */
  @Transform(emptyToUndefined)
  @Matches(/^[A-Za-z][A-Za-z0-9]{0,9}$/, { message: 'CIELO_ORDER_ID_PREFIX must be 1 to 10 letters or digits, starting with a letter' })
  CIELO_ORDER_ID_PREFIX = 'GW';

  /**
   * CARD_PROVIDER or BOLETO_PROVIDER=cielo: longest wait for one answer of Cielo. A sale's POST is never sent again: one
   * without an answer in time is left EM_PROCESSAMENTO and found later by its MerchantOrderId.
   */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 120000' })
  @Min(1000, { message: 'CIELO_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 120000' })
  @Max(120_000, { message: 'CIELO_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 120000' })
  CIELO_TIMEOUT_MS = 30_000;

  /**
   * CARD_PROVIDER=cielo: most connections open at once to each of Cielo's hosts (the transactional, the
   * query and the 3-D Secure MPI host, per process). A call beyond it waits in the process for a free
   * connection: Cielo takes hundreds of milliseconds to answer a sale, so a cap below the sales in flight
   * queues them (at 64, 500 sales at 800 ms each would wait up to 8 answers' time).
   */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_MAX_SOCKETS must be a whole number of connections, 1 to 4096' })
  @Min(1, { message: 'CIELO_MAX_SOCKETS must be a whole number of connections, 1 to 4096' })
  @Max(4096, { message: 'CIELO_MAX_SOCKETS must be a whole number of connections, 1 to 4096' })
  CIELO_MAX_SOCKETS = 512;

  /**
   * CARD_PROVIDER=cielo: how long after a card sale was sent Cielo's look-up by MerchantOrderId finding no
   * payment means none will ever be made (the sale then fails, FALHA). Before it, "none found" is no answer
   * and the janitor asks again: POST /1/sales has no idempotency, so a sale is never sent twice, and a
   * payment still on its way, or not yet indexed by the look-up, must have time to show.
   */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_NOT_FOUND_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'CIELO_NOT_FOUND_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'CIELO_NOT_FOUND_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  CIELO_NOT_FOUND_AFTER_SECONDS = 900;

  /**
   * CARD_PROVIDER or BOLETO_PROVIDER=cielo: the public URL registered at Cielo for its notification post (ref §10): https, its
   * last path segment unguessable (22 or more letters, digits, - or _); the service serves POST on its path.
   * http only on loopback (tests). Unset: no notification is taken, and pending sales wait for the janitor.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  CIELO_NOTIFICATION_URL?: string;

  /**
   * CARD_PROVIDER or BOLETO_PROVIDER=cielo: a static header Cielo is configured to send with each notification, `Name: value`
   * (the value a secret); a post without it is answered 401 and nothing is kept. Unset: not checked.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[A-Za-z0-9-]{1,64}:\s*[!-~][ -~]{0,254}$/, { message: 'CIELO_NOTIFICATION_HEADER must be `Name: value` (a header name of letters, digits and -, then a printable value)' })
  CIELO_NOTIFICATION_HEADER?: string;

  /** CARD_PROVIDER or BOLETO_PROVIDER=cielo: most notified payments waiting to be checked with Cielo; a notification beyond it is answered 503 (Cielo sends it again). */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  @Min(100, { message: 'CIELO_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  @Max(1_000_000, { message: 'CIELO_INBOX_MAX must be a whole number of ids, 100 to 1000000' })
  CIELO_INBOX_MAX = 1000;

  /**
   * BOLETO_PROVIDER=cielo (required then): the bank contract Cielo registers boletos through (ref §9):
   * Bradesco2, BancoDoBrasil3, or Simulado in Cielo's sandbox. BancoDoBrasil2 was discontinued at the end
   * of 2025 and is refused.
   */
  @IsOptional()
  @IsIn(['Bradesco2', 'BancoDoBrasil3', 'Simulado'], { message: 'CIELO_BOLETO_PROVIDER must be one of: Bradesco2, BancoDoBrasil3, Simulado' })
  CIELO_BOLETO_PROVIDER?: 'Bradesco2' | 'BancoDoBrasil3' | 'Simulado';

  /** BOLETO_PROVIDER=cielo: the assignor's (the platform's) name printed on the boleto (Payment.Assignor, at most 200 characters); unset: the bank contract's. */
  @IsOptional()
  @Matches(/^\P{Cc}{1,200}$/u, { message: 'CIELO_BOLETO_ASSIGNOR must be 1 to 200 characters' })
  CIELO_BOLETO_ASSIGNOR?: string;

  /** BOLETO_PROVIDER=cielo: the instructions printed for the bank's cashier (Payment.Instructions, at most 255 characters; Banco do Brasil keeps 50). */
  @IsOptional()
  @Matches(/^\P{Cc}{1,255}$/u, { message: 'CIELO_BOLETO_INSTRUCTIONS must be 1 to 255 characters' })
  CIELO_BOLETO_INSTRUCTIONS?: string;

  /** BOLETO_PROVIDER=cielo: the text printed for the payer (Payment.Demonstrative, at most 255 characters). */
  @IsOptional()
  @Matches(/^\P{Cc}{1,255}$/u, { message: 'CIELO_BOLETO_DEMONSTRATIVE must be 1 to 255 characters' })
  CIELO_BOLETO_DEMONSTRATIVE?: string;

  /**
   * BOLETO_PROVIDER=cielo: days after its due date an unpaid boleto is still waited for before it is
   * cancelled here: a boleto paid on its due date reaches Cielo only after the bank's clearing (Bradesco's
   * batches run the next mornings; Banco do Brasil's by reconciliation).
   */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_BOLETO_CLEARING_DAYS must be a whole number of days, 0 to 30' })
  @Min(0, { message: 'CIELO_BOLETO_CLEARING_DAYS must be a whole number of days, 0 to 30' })
  @Max(30, { message: 'CIELO_BOLETO_CLEARING_DAYS must be a whole number of days, 0 to 30' })
  CIELO_BOLETO_CLEARING_DAYS = 3;

  /** BOLETO_PROVIDER=cielo: how often each open boleto is asked about at Cielo (the poll, for payments no notification told of). */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_BOLETO_POLL_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'CIELO_BOLETO_POLL_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'CIELO_BOLETO_POLL_SECONDS must be a whole number of seconds, 1 to 86400' })
  CIELO_BOLETO_POLL_SECONDS = 3600;

  /** BOLETO_PROVIDER=cielo: how many days after it was cancelled unpaid a boleto is still asked about, for a late payment (owed back to its payer). */
  @Transform(toInteger)
  @IsInt({ message: 'CIELO_BOLETO_LATE_WATCH_DAYS must be a whole number of days, 0 to 90' })
  @Min(0, { message: 'CIELO_BOLETO_LATE_WATCH_DAYS must be a whole number of days, 0 to 90' })
  @Max(90, { message: 'CIELO_BOLETO_LATE_WATCH_DAYS must be a whole number of days, 0 to 90' })
  CIELO_BOLETO_LATE_WATCH_DAYS = 30;

  @Transform(toBoolean)
  @IsBoolean({ message: 'POSTBACK_ALLOW_PRIVATE_NETWORKS must be true or false' })
  POSTBACK_ALLOW_PRIVATE_NETWORKS = false;

  /**
   * Lets the sandbox's clock (POST /api/sandbox/scheduler/run with a `now` ahead) run the jobs on records
   * a real PSP holds too — expiring, billing and cancelling them early — for tests against a PSP's test
   * environment or a simulator. Off by default and refused with NODE_ENV=production: the sandbox never
   * moves a real record.
   */
  @Transform(toBoolean)
  @IsBoolean({ message: 'SANDBOX_CLOCK_MOVES_REAL_RECORDS must be true or false' })
  SANDBOX_CLOCK_MOVES_REAL_RECORDS = false;

  @Transform(toInteger)
  @IsInt({ message: 'RATE_LIMIT_RPS must be a whole number, 0 to turn the limit off' })
  @Min(0, { message: 'RATE_LIMIT_RPS must be a whole number, 0 to turn the limit off' })
  RATE_LIMIT_RPS = 100;

  /**
   * 32-byte key (64 hex characters) that encrypts stored secrets (postback secrets). Unset: a fixed
   * development key is used and a warning is logged; set it in production.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9a-fA-F]{64}$/, { message: 'ENCRYPTION_KEY must be 64 hexadecimal characters (32 bytes)' })
  ENCRYPTION_KEY?: string;

  /**
   * Earlier ENCRYPTION_KEYs, comma-separated (64 hex characters each), kept only to read what they
   * sealed until `npm run cli -- secrets:reencrypt` has sealed everything again with ENCRYPTION_KEY.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9a-fA-F]{64}(,[0-9a-fA-F]{64}){0,9}$/, { message: 'ENCRYPTION_KEYS must be 1 to 10 comma-separated keys of 64 hexadecimal characters' })
  ENCRYPTION_KEYS?: string;

  /** How often the notifications relay looks for due postbacks and webhooks, in milliseconds. */
  @Transform(toInteger)
  @IsInt({ message: 'OUTBOX_POLL_MS must be a whole number of milliseconds, 50 to 3600000' })
  @Min(50, { message: 'OUTBOX_POLL_MS must be a whole number of milliseconds, 50 to 3600000' })
  @Max(3_600_000, { message: 'OUTBOX_POLL_MS must be a whole number of milliseconds, 50 to 3600000' })
  OUTBOX_POLL_MS = 1000;

  /** Seconds after which an event handed to the queue but not delivered is handed over again (a job lost with Redis or a killed process). */
  @Transform(toInteger)
  @IsInt({ message: 'OUTBOX_STALE_CLAIM_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'OUTBOX_STALE_CLAIM_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'OUTBOX_STALE_CLAIM_SECONDS must be a whole number of seconds, 1 to 86400' })
  OUTBOX_STALE_CLAIM_SECONDS = 60;

  /** How long a worker holds a queue job before another worker may take it as stalled (its process died), in milliseconds. */
  @Transform(toInteger)
  @IsInt({ message: 'QUEUE_LOCK_DURATION_MS must be a whole number of milliseconds, 1000 to 600000' })
  @Min(1000, { message: 'QUEUE_LOCK_DURATION_MS must be a whole number of milliseconds, 1000 to 600000' })
  @Max(600_000, { message: 'QUEUE_LOCK_DURATION_MS must be a whole number of milliseconds, 1000 to 600000' })
  QUEUE_LOCK_DURATION_MS = 30_000;

  /** Seconds after the first try at which a failed postback is retried, comma-separated. */
  @Transform(emptyToUndefined)
  @Matches(/^\d+(\.\d+)?(,\d+(\.\d+)?){0,19}$/, {
    message: 'POSTBACK_RETRY_SCHEDULE_SECONDS must be 1 to 20 comma-separated numbers of seconds',
  })
  POSTBACK_RETRY_SCHEDULE_SECONDS = '30,120,600,1800,3600,10800,21600,43200,86400';

  /** Most connections the service opens to PostgreSQL (per process). */
  @Transform(toInteger)
  @IsInt({ message: 'DB_POOL_SIZE must be a whole number, 1 to 200' })
  @Min(1, { message: 'DB_POOL_SIZE must be a whole number, 1 to 200' })
  @Max(200, { message: 'DB_POOL_SIZE must be a whole number, 1 to 200' })
  DB_POOL_SIZE = 20;

  /** How long a request waits for a free connection before it is answered 503 with Retry-After. */
  @Transform(toInteger)
  @IsInt({ message: 'DB_POOL_ACQUIRE_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  @Min(100, { message: 'DB_POOL_ACQUIRE_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  @Max(60_000, { message: 'DB_POOL_ACQUIRE_TIMEOUT_MS must be a whole number of milliseconds, 100 to 60000' })
  DB_POOL_ACQUIRE_TIMEOUT_MS = 5000;

  /** PostgreSQL statement_timeout of every connection. */
  @Transform(toInteger)
  @IsInt({ message: 'DB_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  @Min(100, { message: 'DB_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  @Max(600_000, { message: 'DB_STATEMENT_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  DB_STATEMENT_TIMEOUT_MS = 15_000;

  /** PostgreSQL lock_timeout: the longest wait for a row or table lock. */
  @Transform(toInteger)
  @IsInt({ message: 'DB_LOCK_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  @Min(100, { message: 'DB_LOCK_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  @Max(600_000, { message: 'DB_LOCK_TIMEOUT_MS must be a whole number of milliseconds, 100 to 600000' })
  DB_LOCK_TIMEOUT_MS = 5000;

  /** PostgreSQL idle_in_transaction_session_timeout: a transaction left idle this long is ended by the server. */
  @Transform(toInteger)
  @IsInt({ message: 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 600000' })
  @Min(1000, { message: 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 600000' })
  @Max(600_000, { message: 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 600000' })
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

  /**
   * A card sale left EM_PROCESSAMENTO, or a withdrawal whose payout was not recorded as sent, this long
   * (real clock) is resolved by the recovery job with the provider. Longer than any provider call takes.
   */
  @Transform(toInteger)
  @IsInt({ message: 'PROVIDER_RECOVERY_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Min(1, { message: 'PROVIDER_RECOVERY_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  @Max(86_400, { message: 'PROVIDER_RECOVERY_AFTER_SECONDS must be a whole number of seconds, 1 to 86400' })
  PROVIDER_RECOVERY_AFTER_SECONDS = 120;

  /** How often the janitor passes over the provider operations left pending (card charges, refunds, payouts, Pix returns, Pix Automático). */
  @Transform(toInteger)
  @IsInt({ message: 'JANITOR_SECONDS must be a whole number of seconds, 1 to 3600' })
  @Min(1, { message: 'JANITOR_SECONDS must be a whole number of seconds, 1 to 3600' })
  @Max(3600, { message: 'JANITOR_SECONDS must be a whole number of seconds, 1 to 3600' })
  JANITOR_SECONDS = 30;

  /**
   * The sandbox acquirer's latency, for trying what a slow acquirer does (never needed in production):
   * milliseconds a card charge travels before the acquirer records it (a void sent meanwhile wins), and
   * milliseconds its answer travels after (the charge is made; a void sent meanwhile finds it).
   */
  @Transform(toInteger)
  @IsInt({ message: 'SANDBOX_CHARGE_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  @Min(0, { message: 'SANDBOX_CHARGE_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  @Max(60_000, { message: 'SANDBOX_CHARGE_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  SANDBOX_CHARGE_DELAY_MS = 0;

  @Transform(toInteger)
  @IsInt({ message: 'SANDBOX_CHARGE_ANSWER_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  @Min(0, { message: 'SANDBOX_CHARGE_ANSWER_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  @Max(60_000, { message: 'SANDBOX_CHARGE_ANSWER_DELAY_MS must be a whole number of milliseconds, 0 to 60000' })
  SANDBOX_CHARGE_ANSWER_DELAY_MS = 0;

  /** Days after a failed card renewal's billing date at which it is retried (platform.md §7). */
  @Transform(emptyToUndefined)
  @Matches(/^\d{1,2}(,\d{1,2}){0,9}$/, { message: 'SUBSCRIPTION_RETRY_DAYS must be 1 to 10 comma-separated whole numbers of days' })
  SUBSCRIPTION_RETRY_DAYS = '1,3,5';

  /** Days after a failed renewal's billing date at which an unpaid PAST_DUE subscription is cancelled. */
  @Transform(toInteger)
  @IsInt({ message: 'SUBSCRIPTION_GRACE_DAYS must be a whole number of days, 1 to 60' })
  @Min(1, { message: 'SUBSCRIPTION_GRACE_DAYS must be a whole number of days, 1 to 60' })
  @Max(60, { message: 'SUBSCRIPTION_GRACE_DAYS must be a whole number of days, 1 to 60' })
  SUBSCRIPTION_GRACE_DAYS = 7;

  /**
   * Subscriptions the billing job bills at once in one instance (each renewal holds at most one
   * connection at a time); capped at DB_POOL_SIZE - 1 so that requests always find a connection.
   */
  @Transform(toInteger)
  @IsInt({ message: 'BILLING_CONCURRENCY must be a whole number, 1 to 64' })
  @Min(1, { message: 'BILLING_CONCURRENCY must be a whole number, 1 to 64' })
  @Max(64, { message: 'BILLING_CONCURRENCY must be a whole number, 1 to 64' })
  BILLING_CONCURRENCY = 8;

  /**
   * Delivered postbacks and webhooks, with their delivery attempts, are deleted this many days after
   * delivery; the events API promises at least 30.
   */
  @Transform(toInteger)
  @IsInt({ message: 'OUTBOX_RETENTION_DAYS must be a whole number of days, 30 to 3650' })
  @Min(30, { message: 'OUTBOX_RETENTION_DAYS must be a whole number of days, 30 to 3650' })
  @Max(3650, { message: 'OUTBOX_RETENTION_DAYS must be a whole number of days, 30 to 3650' })
  OUTBOX_RETENTION_DAYS = 30;

  /**
   * Days of failures without a success after which a postback or webhook URL is marked failing (a
   * fraction of a day is allowed, for tests).
   */
  @Transform(toNumber)
  @IsNumber({}, { message: 'POSTBACK_ENDPOINT_FAILING_DAYS must be a number of days above 0 and at most 30' })
  @Min(0.00001, { message: 'POSTBACK_ENDPOINT_FAILING_DAYS must be a number of days above 0 and at most 30' })
  @Max(30, { message: 'POSTBACK_ENDPOINT_FAILING_DAYS must be a number of days above 0 and at most 30' })
  POSTBACK_ENDPOINT_FAILING_DAYS = 5;

  /**
   * Express' `trust proxy`: false (default, the client address is the peer's), true, a hop count, or
   * addresses/subnets of the reverse proxies whose X-Forwarded-For is believed (for the rate limit).
   */
  @Transform(emptyToUndefined)
  @Matches(/^(false|true|\d{1,2}|[0-9a-fA-F:./]+(,[0-9a-fA-F:./]+)*|loopback|linklocal|uniquelocal)$/, {
    message: 'TRUST_PROXY must be false, true, a hop count, loopback, linklocal, uniquelocal or comma-separated addresses',
  })
  TRUST_PROXY = 'false';

  /**
   * Seconds a verified API key pair is kept in memory (0: every request reads it from PostgreSQL).
   * Revoking a pair or blocking a seller drops it at once in every instance (Redis pub/sub); while that
   * channel is down the cache is not used. This is only the backstop for changes made outside the service.
   */
  @Transform(toInteger)
  @IsInt({ message: 'API_KEY_CACHE_SECONDS must be a whole number of seconds, 0 to 3600' })
  @Min(0, { message: 'API_KEY_CACHE_SECONDS must be a whole number of seconds, 0 to 3600' })
  @Max(3600, { message: 'API_KEY_CACHE_SECONDS must be a whole number of seconds, 0 to 3600' })
  API_KEY_CACHE_SECONDS = 60;

  /**
   * Development and test aid: a query that would take a second pool connection while the same unit of
   * work holds one inside a transaction fails at once instead of waiting (the tests run with it on).
   */
  @Transform(toBoolean)
  @IsBoolean({ message: 'DB_GUARD_NESTED_CONNECTIONS must be true or false' })
  DB_GUARD_NESTED_CONNECTIONS = false;

  /**
   * Signs the dashboard's session cookie (32+ characters). Required when NODE_ENV=production; elsewhere a
   * development secret is used and a warning is logged.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'SESSION_SECRET must be at least 32 characters long' })
  SESSION_SECRET?: string;

  /** Where sellers reach the dashboard, for invitation links (no trailing slash); default http://localhost:PORT. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*[^\s?#/])?$/, { message: 'DASHBOARD_BASE_URL must be an http or https URL without a trailing slash' })
  DASHBOARD_BASE_URL?: string;

  /** Failed dashboard sign-ins allowed per e-mail within LOGIN_ATTEMPTS_WINDOW_SECONDS. */
  @Transform(toInteger)
  @IsInt({ message: 'LOGIN_MAX_ATTEMPTS_PER_ACCOUNT must be a whole number, 1 to 1000' })
  @Min(1, { message: 'LOGIN_MAX_ATTEMPTS_PER_ACCOUNT must be a whole number, 1 to 1000' })
  @Max(1000, { message: 'LOGIN_MAX_ATTEMPTS_PER_ACCOUNT must be a whole number, 1 to 1000' })
  LOGIN_MAX_ATTEMPTS_PER_ACCOUNT = 5;

  /** Failed dashboard sign-ins allowed per client address within LOGIN_ATTEMPTS_WINDOW_SECONDS. */
  @Transform(toInteger)
  @IsInt({ message: 'LOGIN_MAX_ATTEMPTS_PER_ADDRESS must be a whole number, 1 to 10000' })
  @Min(1, { message: 'LOGIN_MAX_ATTEMPTS_PER_ADDRESS must be a whole number, 1 to 10000' })
  @Max(10_000, { message: 'LOGIN_MAX_ATTEMPTS_PER_ADDRESS must be a whole number, 1 to 10000' })
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS = 20;

  /** The window over which failed sign-ins are counted, in seconds. */
  @Transform(toInteger)
  @IsInt({ message: 'LOGIN_ATTEMPTS_WINDOW_SECONDS must be a whole number of seconds, 10 to 86400' })
  @Min(10, { message: 'LOGIN_ATTEMPTS_WINDOW_SECONDS must be a whole number of seconds, 10 to 86400' })
  @Max(86_400, { message: 'LOGIN_ATTEMPTS_WINDOW_SECONDS must be a whole number of seconds, 10 to 86400' })
  LOGIN_ATTEMPTS_WINDOW_SECONDS = 900;

  /** Withdrawal webhooks a seller may hold: each withdrawal event goes to every one of them. */
  @Transform(toInteger)
  @IsInt({ message: 'WEBHOOKS_PER_SELLER_MAX must be a whole number, 1 to 100' })
  @Min(1, { message: 'WEBHOOKS_PER_SELLER_MAX must be a whole number, 1 to 100' })
  @Max(100, { message: 'WEBHOOKS_PER_SELLER_MAX must be a whole number, 1 to 100' })
  WEBHOOKS_PER_SELLER_MAX = 10;

  /** Test events and redeliveries a seller may ask for from the dashboard per hour (the operator is not limited). */
  @Transform(toInteger)
  @IsInt({ message: 'MANUAL_SENDS_PER_HOUR must be a whole number, 1 to 10000' })
  @Min(1, { message: 'MANUAL_SENDS_PER_HOUR must be a whole number, 1 to 10000' })
  @Max(10_000, { message: 'MANUAL_SENDS_PER_HOUR must be a whole number, 1 to 10000' })
  MANUAL_SENDS_PER_HOUR = 20;

  /** `production` requires ENCRYPTION_KEY and SESSION_SECRET and keeps the operator and sandbox routes out of /docs. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  NODE_ENV?: string;

  @Transform(emptyToUndefined)
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
  })
  LOG_LEVEL = 'info';

  /** A file the JSON log lines are appended to instead of standard output (unset: standard output). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString({ message: 'LOG_FILE must be a file path' })
  LOG_FILE?: string;
}

export class InvalidEnvironmentError extends Error {}

/** Validates and types the environment; throws a one-line reason naming the first bad variable. */
export function validateEnvironment(raw: Record<string, unknown>): EnvironmentVariables {
  const known = Object.keys(new EnvironmentVariables());
  const relevant: Record<string, unknown> = {};
  for (const key of [...known, 'ADMIN_TOKEN', 'ENCRYPTION_KEY', 'ENCRYPTION_KEYS', 'SESSION_SECRET', 'DASHBOARD_BASE_URL', 'NODE_ENV']) {
    if (raw[key] !== undefined) relevant[key] = raw[key];
  }
  const env = plainToInstance(EnvironmentVariables, relevant, { exposeDefaultValues: true });
  const errors = validateSync(env, { whitelist: true });
  if (errors.length > 0) {
    const first = errors[0];
    const message = Object.values(first.constraints ?? {})[0] ?? `${first.property} is invalid`;
    throw new InvalidEnvironmentError(`Invalid configuration: ${message}`);
  }
  if (env.NODE_ENV === 'production' && !env.ENCRYPTION_KEY) {
    // The development key is in the repository: stored secrets would be readable by anyone with it.
    throw new InvalidEnvironmentError('Invalid configuration: ENCRYPTION_KEY is required when NODE_ENV=production (64 hexadecimal characters)');
  }
  if (env.NODE_ENV === 'production' && !env.SESSION_SECRET) {
    // The development secret is in the repository: anyone could forge a dashboard session cookie with it.
    throw new InvalidEnvironmentError('Invalid configuration: SESSION_SECRET is required when NODE_ENV=production (32 characters or more)');
  }
  if (env.NODE_ENV === 'production' && env.SANDBOX_CLOCK_MOVES_REAL_RECORDS) {
    throw new InvalidEnvironmentError('Invalid configuration: SANDBOX_CLOCK_MOVES_REAL_RECORDS cannot be true when NODE_ENV=production (the sandbox never moves a real record)');
  }
  checkApiPix(env);
  checkCielo(env);
  if (env.PAYOUT_PROVIDER === 'efi' && env.PIX_PROVIDER !== 'api-pix') {
    // Payouts leave from the account the Pix were received in: Efí's send rides on its API Pix connection.
    throw new InvalidEnvironmentError('Invalid configuration: PAYOUT_PROVIDER=efi requires PIX_PROVIDER=api-pix configured against Efí (the same host, OAuth client, certificate and receiver key)');
  }
  if (env.PAYOUT_PROVIDER === 'efi' && env.EFI_RESEND_AFTER_SECONDS * 1000 <= env.API_PIX_TIMEOUT_MS) {
    throw new InvalidEnvironmentError('Invalid configuration: EFI_RESEND_AFTER_SECONDS must be longer than API_PIX_TIMEOUT_MS (a send is never repeated while an earlier one may be on its way)');
  }
  return env;
}

/** A webhook path's last segment: at least 22 URL-safe characters (about 128 bits), so that nobody guesses where to knock. */
const UNGUESSABLE_SEGMENT = /^[A-Za-z0-9_-]{22,}$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** With PIX_PROVIDER=api-pix, every API_PIX_* variable but the CA bundle is required, and the files must hold PEM. */
function checkApiPix(env: EnvironmentVariables): void {
  if (env.PIX_PROVIDER !== 'api-pix') return;
  const fail = (reason: string) => {
    throw new InvalidEnvironmentError(`Invalid configuration: ${reason}`);
  };
  for (const name of ['API_PIX_BASE_URL', 'API_PIX_TOKEN_URL', 'API_PIX_CLIENT_ID', 'API_PIX_CLIENT_SECRET', 'API_PIX_CERT_FILE', 'API_PIX_KEY_FILE', 'API_PIX_RECEIVER_KEY', 'API_PIX_WEBHOOK_URL'] as const) {
    if (!env[name]) fail(`${name} is required when PIX_PROVIDER=api-pix`);
  }
  for (const [name, kind] of [['API_PIX_CERT_FILE', 'CERTIFICATE'], ['API_PIX_KEY_FILE', 'PRIVATE KEY'], ['API_PIX_CA_FILE', 'CERTIFICATE']] as const) {
    const file = env[name];
    if (!file) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return fail(`${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${file}`);
    }
    if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text)) fail(`${name} must be a PEM file holding a ${kind.toLowerCase()}: ${file}`);
  }
  if (!isPixKey(env.API_PIX_RECEIVER_KEY as string)) fail('API_PIX_RECEIVER_KEY must be a Pix key (CPF, CNPJ, e-mail, +55 phone or random EVP key)');
  let webhook: URL;
  try {
    webhook = new URL(env.API_PIX_WEBHOOK_URL as string);
  } catch {
    return fail('API_PIX_WEBHOOK_URL must be a URL, e.g. https://gateway.example/psp/<random segment>');
  }
  if (webhook.protocol !== 'https:' && !(webhook.protocol === 'http:' && LOOPBACK_HOSTS.has(webhook.hostname))) fail('API_PIX_WEBHOOK_URL must be an https URL (http only on loopback, for tests)');
  if (webhook.search || webhook.hash) fail('API_PIX_WEBHOOK_URL must have no query or fragment');
  const segment = webhook.pathname.replace(/\/+$/, '').split('/').pop() ?? '';
  if (!UNGUESSABLE_SEGMENT.test(segment)) fail('API_PIX_WEBHOOK_URL must end in an unguessable path segment: 22 or more letters, digits, - or _ (e.g. openssl rand -hex 16)');
}

/**
 * With CARD_PROVIDER=cielo (or PAYMENT_PROVIDER=cielo with no CARD_PROVIDER), the store's credentials and
 * both hosts are required; the CA bundle, when given, must hold PEM; a look-up's "none found" is trusted
 * only after the POST's longest wait.
 */
function checkCielo(env: EnvironmentVariables): void {
  const cards = (env.CARD_PROVIDER ?? env.PAYMENT_PROVIDER) === 'cielo';
  const boletos = (env.BOLETO_PROVIDER ?? env.PAYMENT_PROVIDER) === 'cielo';
  if (!cards && !boletos) return;
  const fail = (reason: string) => {
    throw new InvalidEnvironmentError(`Invalid configuration: ${reason}`);
  };
  const rail = cards ? 'CARD_PROVIDER=cielo' : 'BOLETO_PROVIDER=cielo';
  for (const name of ['CIELO_MERCHANT_ID', 'CIELO_MERCHANT_KEY', 'CIELO_API_URL', 'CIELO_QUERY_URL'] as const) {
    if (!env[name]) fail(`${name} is required when ${rail}`);
  }
  if (boletos && !env.CIELO_BOLETO_PROVIDER) fail('CIELO_BOLETO_PROVIDER is required when BOLETO_PROVIDER=cielo (Bradesco2, BancoDoBrasil3, or Simulado in Cielo’s sandbox)');
  if (env.CIELO_CA_FILE) {
    let text: string;
    try {
      text = readFileSync(env.CIELO_CA_FILE, 'utf8');
    } catch (error) {
      return fail(`CIELO_CA_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${env.CIELO_CA_FILE}`);
    }
    if (!/-----BEGIN [A-Z ]*CERTIFICATE-----/.test(text)) fail(`CIELO_CA_FILE must be a PEM file holding a certificate: ${env.CIELO_CA_FILE}`);
  }
  if (env.CIELO_NOT_FOUND_AFTER_SECONDS * 1000 <= env.CIELO_TIMEOUT_MS) {
    fail('CIELO_NOT_FOUND_AFTER_SECONDS must be longer than CIELO_TIMEOUT_MS: a sale still on its way would be taken as never made');
  }
  if (env.CIELO_3DS_URL) {
    for (const name of ['CIELO_3DS_CLIENT_ID', 'CIELO_3DS_CLIENT_SECRET', 'CIELO_3DS_ESTABLISHMENT_CODE', 'CIELO_3DS_MERCHANT_NAME', 'CIELO_3DS_MCC'] as const) {
      if (!env[name]) fail(`${name} is required with CIELO_3DS_URL (debit's 3-D Secure)`);
    }
  }
  if (env.CIELO_NOTIFICATION_URL) {
    let url: URL;
    try {
      url = new URL(env.CIELO_NOTIFICATION_URL);
    } catch {
      return fail('CIELO_NOTIFICATION_URL must be a URL, e.g. https://gateway.example/cielo/<random segment>');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) fail('CIELO_NOTIFICATION_URL must be an https URL (http only on loopback, for tests)');
    if (url.search || url.hash) fail('CIELO_NOTIFICATION_URL must have no query or fragment');
    const segment = url.pathname.replace(/\/+$/, '').split('/').pop() ?? '';
    if (!UNGUESSABLE_SEGMENT.test(segment)) fail('CIELO_NOTIFICATION_URL must end in an unguessable path segment: 22 or more letters, digits, - or _ (e.g. openssl rand -hex 16)');
  } else if (env.CIELO_NOTIFICATION_HEADER) {
    fail('CIELO_NOTIFICATION_HEADER needs CIELO_NOTIFICATION_URL (the URL Cielo sends it to)');
  }
}
