import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { EnvironmentVariables } from './env.schema';

/** Development-only key for stored secrets, used when ENCRYPTION_KEY is unset (a warning is logged). */
const DEVELOPMENT_ENCRYPTION_KEY = '5f0c8d0b1c9e4a7f8e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1';

/** Typed access to the validated environment; nothing else reads process.env. */
@Injectable()
export class AppConfig {
  constructor(private readonly config: ConfigService<EnvironmentVariables, true>) {}

  get port(): number {
    return this.config.get('PORT', { infer: true });
  }
  get databaseUrl(): string {
    return this.config.get('DATABASE_URL', { infer: true });
  }
  get redisUrl(): string {
    return this.config.get('REDIS_URL', { infer: true });
  }
  /** The operator token, or null when the operator API is off. */
  get adminToken(): string | null {
    return this.config.get('ADMIN_TOKEN', { infer: true }) ?? null;
  }
  get paymentProvider(): 'sandbox' {
    return this.config.get('PAYMENT_PROVIDER', { infer: true }) as 'sandbox';
  }
  get isSandbox(): boolean {
    return this.paymentProvider === 'sandbox';
  }
  get postbackAllowPrivateNetworks(): boolean {
    return this.config.get('POSTBACK_ALLOW_PRIVATE_NETWORKS', { infer: true });
  }
  get rateLimitPerSecond(): number {
    return this.config.get('RATE_LIMIT_RPS', { infer: true });
  }
  get encryptionKey(): Buffer {
    const key: string | undefined = this.config.get('ENCRYPTION_KEY', { infer: true });
    return Buffer.from(key ?? DEVELOPMENT_ENCRYPTION_KEY, 'hex');
  }
  get usesDevelopmentEncryptionKey(): boolean {
    return !this.config.get('ENCRYPTION_KEY', { infer: true });
  }
  get logLevel(): string {
    return this.config.get('LOG_LEVEL', { infer: true });
  }
}
