import 'reflect-metadata';
import { Server } from 'node:http';
import { validateEnvironment } from './config/env.schema';
import { createApp } from './configure-app';
import { prepareDatabase } from './database/prepare-database';
import { Logger } from 'nestjs-pino';
import { AppConfig } from './config/app-config';
import { isRedisVersionAtLeast, MINIMUM_REDIS_VERSION, redisVersionAt } from './redis/redis-version';

/** Checks the configuration, creates and migrates the database, then serves. Any failure: one line and exit 1. */
async function bootstrap(): Promise<void> {
  const env = validateEnvironment(process.env);
  // A Redis that answers must be recent enough; one that does not answer yet is no reason not to start.
  const redisVersion = await redisVersionAt(env.REDIS_URL);
  if (redisVersion !== null && !isRedisVersionAtLeast(redisVersion)) {
    throw new Error(`Redis ${redisVersion} answers at REDIS_URL: the service needs Redis ${MINIMUM_REDIS_VERSION} or later`);
  }
  await prepareDatabase(env.DATABASE_URL).catch((error: Error) => {
    throw new Error(`Cannot prepare the database at ${redactUrl(env.DATABASE_URL)}: ${error.message}`);
  });
  const app = await createApp();
  const config = app.get(AppConfig);
  if (redisVersion === null) {
    app.get(Logger).warn(`Redis does not answer at boot: its version (${MINIMUM_REDIS_VERSION} or later needed) was not checked.`);
  }
  if (config.isProduction && config.trustProxy === false) {
    app.get(Logger).warn(
      'TRUST_PROXY is false in production: behind a reverse proxy that terminates TLS, the dashboard\'s session cookie is not marked Secure ' +
        "and every client is counted as the proxy's address. Set TRUST_PROXY to the proxy's hop count or addresses (README, Configuration).",
    );
  }
  if (config.usesDevelopmentEncryptionKey) {
    app.get(Logger).warn('ENCRYPTION_KEY is unset: stored secrets use the development key. Set it in production.');
  }
  if (config.usesDevelopmentSessionSecret) {
    app.get(Logger).warn('SESSION_SECRET is unset: dashboard sessions use the development secret. Set it in production.');
  }
  const server = await app.listen(config.port);
  // Keep-alive longer than the usual load balancer idle timeout (60 s), so that the balancer, not this
  // process, closes idle connections and never reuses one that is being closed (a spurious 502). Node
  // (18 and later) times the headers of each request from its first byte, not the connection's idle time:
  // headersTimeout (configure-app.ts) need not exceed this.
  server.keepAliveTimeout = 65_000;
  closeIdleConnectionsOnShutdown(server);
}

/**
 * On shutdown (SIGTERM), requests in flight finish, and every keep-alive connection is closed as soon as
 * it is idle: without this a client's idle connection would hold the process for keepAliveTimeout (65 s).
 */
function closeIdleConnectionsOnShutdown(server: Server): void {
  const close = server.close.bind(server);
  server.close = ((callback?: (error?: Error) => void) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    server.once('close', () => clearInterval(sweep));
    return close(callback);
  }) as Server['close'];
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

bootstrap().catch((error: Error) => {
  console.error(error.message.split('\n')[0]);
  process.exit(1);
});
