import { ProviderAdapters } from '../../../src/providers/provider-registry';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { DataSource } from 'typeorm';
import { createApp } from '../../../src/configure-app';

export const ADMIN_TOKEN = 'e2e-admin-token-0123456789';

export interface TestApp {
  app: NestExpressApplication;
  http: TestAgent;
  db: DataSource;
  close(): Promise<void>;
}

/**
 * Boots the real application (AppModule, as `npm start` runs it) on the run's database and Redis.
 * `env` overrides environment variables for this app only; `options.providers` registers providers' adapters
 * besides the application's own (a test's acquirer).
 */
export async function startApp(env: Record<string, string | undefined> = {}, options: { providers?: ProviderAdapters[] } = {}): Promise<TestApp> {
  const saved: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    saved[key] = process.env[key];
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  try {
    const app = await createApp(options);
    await app.init();
    return {
      app,
      http: request(app.getHttpServer()),
      db: app.get(DataSource),
      close: () => app.close(),
    };
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}
