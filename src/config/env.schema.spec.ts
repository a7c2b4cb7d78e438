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
