import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateEnvironment } from './env.schema';

describe('API Pix configuration (issue 21)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'api-pix-env-'));
  const cert = join(dir, 'client.pem');
  const key = join(dir, 'client.key');
  writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  writeFileSync(key, '-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n');
  const valid = {
    PIX_PROVIDER: 'api-pix',
    API_PIX_BASE_URL: 'https://psp.example/v2',
    API_PIX_TOKEN_URL: 'https://psp.example/oauth/token',
    API_PIX_CLIENT_ID: 'client',
    API_PIX_CLIENT_SECRET: 'secret',
    API_PIX_CERT_FILE: cert,
    API_PIX_KEY_FILE: key,
    API_PIX_RECEIVER_KEY: '7f6d9a3e-2c41-4b8e-9d0a-5e3f1c2b4a69',
    API_PIX_WEBHOOK_URL: 'https://gateway.example/psp/pix/3f9c1a7e5b2d4c6e8a0b1c2d3e4f5a6b',
  };
  const reason = (env: Record<string, string>) => {
    try {
      validateEnvironment(env);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('accepts a complete configuration, and the sandbox needs none of it', () => {
    expect(reason(valid)).toBeNull();
    expect(reason({})).toBeNull();
  });

  it('refuses each bad value with a one-line reason naming the variable', () => {
    expect(reason({ ...valid, PIX_PROVIDER: 'psp' })).toBe('Invalid configuration: PIX_PROVIDER must be one of: sandbox, api-pix');
    expect(reason({ ...valid, API_PIX_CLIENT_SECRET: '' })).toBe('Invalid configuration: API_PIX_CLIENT_SECRET is required when PIX_PROVIDER=api-pix');
    expect(reason({ ...valid, API_PIX_BASE_URL: 'http://psp.example/v2' })).toMatch(/^Invalid configuration: API_PIX_BASE_URL must be an https URL/);
    expect(reason({ ...valid, API_PIX_CERT_FILE: join(dir, 'missing.pem') })).toMatch(/^Invalid configuration: API_PIX_CERT_FILE cannot be read \(ENOENT\)/);
    expect(reason({ ...valid, API_PIX_KEY_FILE: cert })).toMatch(/^Invalid configuration: API_PIX_KEY_FILE must be a PEM file holding a private key/);
    expect(reason({ ...valid, API_PIX_RECEIVER_KEY: 'not a key' })).toMatch(/^Invalid configuration: API_PIX_RECEIVER_KEY must be a Pix key/);
    expect(reason({ ...valid, API_PIX_WEBHOOK_URL: 'https://gateway.example/psp/pix' })).toMatch(/unguessable path segment/);
    expect(reason({ ...valid, API_PIX_WEBHOOK_URL: 'http://gateway.example/psp/pix/3f9c1a7e5b2d4c6e8a0b1c2d3e4f5a6b' })).toMatch(/must be an https URL/);
    expect(reason({ ...valid, API_PIX_RECONCILE_SECONDS: '0' })).toBe('Invalid configuration: API_PIX_RECONCILE_SECONDS must be a whole number of seconds, 1 to 86400');
    // An inbox must hold at least one notification's 100 ids.
    expect(reason({ ...valid, API_PIX_INBOX_MAX: '99' })).toBe('Invalid configuration: API_PIX_INBOX_MAX must be a whole number of ids, 100 to 1000000');
    expect(reason({ ...valid, API_PIX_INBOX_MAX: '100' })).toBeNull();
  });

  it('payouts through Efí (issue 38): on the API Pix connection only, each EFI_* value checked', () => {
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi' })).toBeNull();
    expect(reason({ PAYOUT_PROVIDER: 'efi' })).toBe(
      'Invalid configuration: PAYOUT_PROVIDER=efi requires PIX_PROVIDER=api-pix configured against Efí (the same host, OAuth client, certificate and receiver key)',
    );
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_SEND_VERSION: 'v4' })).toBe('Invalid configuration: EFI_SEND_VERSION must be v2 or v3');
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_SEND_ID_PREFIX: 'GW-SAQUE' })).toMatch(/^Invalid configuration: EFI_SEND_ID_PREFIX must be 1 to 20 letters or digits/);
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_SEND_ID_PREFIX: 'A'.repeat(21) })).toMatch(/^Invalid configuration: EFI_SEND_ID_PREFIX/);
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_SENDS_AT_ONCE: '0' })).toBe('Invalid configuration: EFI_SENDS_AT_ONCE must be a whole number, 1 to 20');
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_SENDS_AT_ONCE: '3', EFI_SEND_VERSION: 'v2', EFI_SEND_ID_PREFIX: 'Loja1' })).toBeNull();
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_RESEND_AFTER_SECONDS: '0' })).toBe('Invalid configuration: EFI_RESEND_AFTER_SECONDS must be a whole number of seconds, 1 to 3600');
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_RESEND_AFTER_SECONDS: '10', API_PIX_TIMEOUT_MS: '10000' })).toMatch(/^Invalid configuration: EFI_RESEND_AFTER_SECONDS must be longer than API_PIX_TIMEOUT_MS/);
    expect(reason({ ...valid, PAYOUT_PROVIDER: 'efi', EFI_RESEND_AFTER_SECONDS: '11', API_PIX_TIMEOUT_MS: '10000' })).toBeNull();
  });
});

describe('Cielo configuration (issue 39)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cielo-env-'));
  const ca = join(dir, 'ca.pem');
  const notPem = join(dir, 'ca.txt');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  writeFileSync(notPem, 'not a certificate');
  const valid = {
    CARD_PROVIDER: 'cielo',
    CIELO_MERCHANT_ID: '7b1d7b5e-53a4-4b0c-9b3a-2f6e1c0d9a11',
    CIELO_MERCHANT_KEY: 'ZQWERTYUIOPASDFGHJKLZXCVBNMQWERTYUIOPASD',
    CIELO_API_URL: 'https://api.cieloecommerce.cielo.com.br',
    CIELO_QUERY_URL: 'https://apiquery.cieloecommerce.cielo.com.br',
  };
  const reason = (env: Record<string, string>) => {
    try {
      validateEnvironment(env);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('accepts a complete configuration (the CA bundle optional), and the sandbox needs none of it', () => {
    expect(reason(valid)).toBeNull();
    expect(reason({ ...valid, CIELO_CA_FILE: ca, CIELO_TIMEOUT_MS: '5000', CIELO_NOT_FOUND_AFTER_SECONDS: '6', CIELO_MAX_SOCKETS: '1' })).toBeNull();
    expect(reason({ CARD_PROVIDER: 'sandbox' })).toBeNull();
    // PAYMENT_PROVIDER names the card rail when CARD_PROVIDER is unset.
    expect(reason({ PAYMENT_PROVIDER: 'cielo' })).toBe('Invalid configuration: CIELO_MERCHANT_ID is required when CARD_PROVIDER=cielo');
  });

  it('refuses each missing or bad value with a one-line reason naming the variable', () => {
    for (const name of ['CIELO_MERCHANT_ID', 'CIELO_MERCHANT_KEY', 'CIELO_API_URL', 'CIELO_QUERY_URL']) {
      expect(reason({ ...valid, [name]: '' })).toBe(`Invalid configuration: ${name} is required when CARD_PROVIDER=cielo`);
    }
    expect(reason({ ...valid, CIELO_MERCHANT_ID: 'store-1' })).toMatch(/^Invalid configuration: CIELO_MERCHANT_ID must be the MerchantId Cielo gave the store: a GUID$/);
    expect(reason({ ...valid, CIELO_MERCHANT_KEY: 'two words' })).toMatch(/^Invalid configuration: CIELO_MERCHANT_KEY must be/);
    expect(reason({ ...valid, CIELO_API_URL: 'http://api.cieloecommerce.cielo.com.br' })).toMatch(/^Invalid configuration: CIELO_API_URL must be an https URL/);
    expect(reason({ ...valid, CIELO_QUERY_URL: 'https://apiquery.cieloecommerce.cielo.com.br/' })).toMatch(/^Invalid configuration: CIELO_QUERY_URL must be an https URL without a trailing slash/);
    expect(reason({ ...valid, CIELO_CA_FILE: join(dir, 'missing.pem') })).toMatch(/^Invalid configuration: CIELO_CA_FILE cannot be read \(ENOENT\)/);
    expect(reason({ ...valid, CIELO_CA_FILE: notPem })).toMatch(/^Invalid configuration: CIELO_CA_FILE must be a PEM file holding a certificate/);
    expect(reason({ ...valid, CIELO_ORDER_ID_PREFIX: 'GW-' })).toBe('Invalid configuration: CIELO_ORDER_ID_PREFIX must be 1 to 10 letters or digits, starting with a letter');
    expect(reason({ ...valid, CIELO_ORDER_ID_PREFIX: 'A'.repeat(11) })).toMatch(/^Invalid configuration: CIELO_ORDER_ID_PREFIX/);
    expect(reason({ ...valid, CIELO_TIMEOUT_MS: '500' })).toBe('Invalid configuration: CIELO_TIMEOUT_MS must be a whole number of milliseconds, 1000 to 120000');
    expect(reason({ ...valid, CIELO_MAX_SOCKETS: '0' })).toBe('Invalid configuration: CIELO_MAX_SOCKETS must be a whole number of connections, 1 to 4096');
    expect(reason({ ...valid, CIELO_MAX_SOCKETS: 'many' })).toBe('Invalid configuration: CIELO_MAX_SOCKETS must be a whole number of connections, 1 to 4096');
    expect(reason({ ...valid, CIELO_NOT_FOUND_AFTER_SECONDS: '0' })).toBe('Invalid configuration: CIELO_NOT_FOUND_AFTER_SECONDS must be a whole number of seconds, 1 to 86400');
    expect(reason({ ...valid, CIELO_TIMEOUT_MS: '30000', CIELO_NOT_FOUND_AFTER_SECONDS: '30' })).toMatch(/^Invalid configuration: CIELO_NOT_FOUND_AFTER_SECONDS must be longer than CIELO_TIMEOUT_MS/);
  });

  it('takes CIELO_NOTIFICATION_URL as https with an unguessable last segment (http on loopback only), and its header as `Name: value`', () => {
    const segment = 'a1B2c3D4e5F6g7H8i9J0k_-z';
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: `https://gateway.example/cielo/${segment}`, CIELO_NOTIFICATION_HEADER: 'X-Cielo-Secret: s3cr3t value' })).toBeNull();
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: `http://127.0.0.1:3000/cielo/${segment}` })).toBeNull();
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: `http://gateway.example/cielo/${segment}` })).toBe('Invalid configuration: CIELO_NOTIFICATION_URL must be an https URL (http only on loopback, for tests)');
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: 'https://gateway.example/cielo/notifications' })).toMatch(/^Invalid configuration: CIELO_NOTIFICATION_URL must end in an unguessable path segment/);
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: `https://gateway.example/cielo/${segment}?a=1` })).toBe('Invalid configuration: CIELO_NOTIFICATION_URL must have no query or fragment');
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: 'not a url' })).toMatch(/^Invalid configuration: CIELO_NOTIFICATION_URL must be a URL/);
    expect(reason({ ...valid, CIELO_NOTIFICATION_URL: `https://gateway.example/cielo/${segment}`, CIELO_NOTIFICATION_HEADER: 'no colon' })).toMatch(/^Invalid configuration: CIELO_NOTIFICATION_HEADER must be `Name: value`/);
    expect(reason({ ...valid, CIELO_NOTIFICATION_HEADER: 'X-Cielo-Secret: s3cr3t' })).toBe('Invalid configuration: CIELO_NOTIFICATION_HEADER needs CIELO_NOTIFICATION_URL (the URL Cielo sends it to)');
    expect(reason({ ...valid, CIELO_INBOX_MAX: '10' })).toBe('Invalid configuration: CIELO_INBOX_MAX must be a whole number of ids, 100 to 1000000');
  });

  it('BOLETO_PROVIDER=cielo needs the connection and a bank contract (CIELO_BOLETO_PROVIDER), each boleto value checked', () => {
    const { CARD_PROVIDER: _cards, ...connection } = valid;
    const boletos = { ...connection, BOLETO_PROVIDER: 'cielo', CIELO_BOLETO_PROVIDER: 'Bradesco2' };
    expect(reason(boletos)).toBeNull();
    expect(reason({ ...boletos, CIELO_BOLETO_PROVIDER: 'BancoDoBrasil3', CIELO_BOLETO_CLEARING_DAYS: '0', CIELO_BOLETO_POLL_SECONDS: '60', CIELO_BOLETO_ASSIGNOR: 'Gateway Ltda' })).toBeNull();
    expect(reason({ BOLETO_PROVIDER: 'cielo', CIELO_BOLETO_PROVIDER: 'Simulado' })).toBe('Invalid configuration: CIELO_MERCHANT_ID is required when BOLETO_PROVIDER=cielo');
    expect(reason({ ...connection, BOLETO_PROVIDER: 'cielo' })).toMatch(/^Invalid configuration: CIELO_BOLETO_PROVIDER is required when BOLETO_PROVIDER=cielo/);
    expect(reason({ ...boletos, CIELO_BOLETO_PROVIDER: 'BancoDoBrasil2' })).toBe('Invalid configuration: CIELO_BOLETO_PROVIDER must be one of: Bradesco2, BancoDoBrasil3, Simulado');
    expect(reason({ ...boletos, CIELO_BOLETO_CLEARING_DAYS: '31' })).toBe('Invalid configuration: CIELO_BOLETO_CLEARING_DAYS must be a whole number of days, 0 to 30');
    expect(reason({ ...boletos, CIELO_BOLETO_POLL_SECONDS: '0' })).toBe('Invalid configuration: CIELO_BOLETO_POLL_SECONDS must be a whole number of seconds, 1 to 86400');
    expect(reason({ ...boletos, CIELO_BOLETO_LATE_WATCH_DAYS: 'x' })).toBe('Invalid configuration: CIELO_BOLETO_LATE_WATCH_DAYS must be a whole number of days, 0 to 90');
    expect(reason({ ...boletos, CIELO_BOLETO_INSTRUCTIONS: 'x'.repeat(256) })).toBe('Invalid configuration: CIELO_BOLETO_INSTRUCTIONS must be 1 to 255 characters');
  });

  it('debit’s 3-D Secure MPI: optional, but complete once CIELO_3DS_URL is set, each value checked', () => {
    const mpi = {
      CIELO_3DS_URL: 'https://mpisandbox.braspag.com.br',
      CIELO_3DS_CLIENT_ID: 'dba3a8db-fa54-40e0-8bab-7bfb9b6f2e2e',
      CIELO_3DS_CLIENT_SECRET: 'D/ilRsfoqHlSUChwAMnlyKdDNd7FMsM7cU/vo02REag=',
      CIELO_3DS_ESTABLISHMENT_CODE: '1006993069',
      CIELO_3DS_MERCHANT_NAME: 'Loja Exemplo Ltda',
      CIELO_3DS_MCC: '5912',
    };
    expect(reason({ ...valid, ...mpi })).toBeNull();
    expect(reason({ ...valid, ...mpi, CIELO_3DS_ENVIRONMENT: 'PRD' })).toBeNull();
    for (const name of ['CIELO_3DS_CLIENT_ID', 'CIELO_3DS_CLIENT_SECRET', 'CIELO_3DS_ESTABLISHMENT_CODE', 'CIELO_3DS_MERCHANT_NAME', 'CIELO_3DS_MCC']) {
      expect(reason({ ...valid, ...mpi, [name]: '' })).toBe(`Invalid configuration: ${name} is required with CIELO_3DS_URL (debit's 3-D Secure)`);
    }
    expect(reason({ ...valid, ...mpi, CIELO_3DS_URL: 'http://mpi.braspag.com.br' })).toMatch(/^Invalid configuration: CIELO_3DS_URL must be an https URL/);
    expect(reason({ ...valid, ...mpi, CIELO_3DS_ESTABLISHMENT_CODE: '12345' })).toBe('Invalid configuration: CIELO_3DS_ESTABLISHMENT_CODE must be the 10-digit establishment code (EC)');
    expect(reason({ ...valid, ...mpi, CIELO_3DS_MERCHANT_NAME: 'A'.repeat(26) })).toBe('Invalid configuration: CIELO_3DS_MERCHANT_NAME must be 1 to 25 characters');
    expect(reason({ ...valid, ...mpi, CIELO_3DS_MCC: '59120' })).toBe('Invalid configuration: CIELO_3DS_MCC must be the 4-digit merchant category code');
    expect(reason({ ...valid, ...mpi, CIELO_3DS_ENVIRONMENT: 'TEST' })).toBe('Invalid configuration: CIELO_3DS_ENVIRONMENT must be SDB or PRD');
  });
});
