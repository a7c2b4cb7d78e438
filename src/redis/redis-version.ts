import Redis from 'ioredis';

/**
 * The oldest Redis the service runs on: Bull's minimum. The service's own commands need less (2.6.12:
 * EVAL, `SET ... EX ... NX`; no `EXPIRE` option of Redis 7); CI runs 7.0. A command that needs a newer
 * Redis raises this, in this one place.
 */
export const MINIMUM_REDIS_VERSION = '2.8.18';

/** Whether a `redis_version` is at least `minimum` (major, minor, patch compared as numbers). */
export function isRedisVersionAtLeast(version: string, minimum = MINIMUM_REDIS_VERSION): boolean {
  const parts = (text: string) => text.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [have, need] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i += 1) {
    if ((have[i] ?? 0) !== (need[i] ?? 0)) return (have[i] ?? 0) > (need[i] ?? 0);
  }
  return true;
}

/**
 * The version of the Redis at `url`, asked once at boot (`INFO server`), or null when it does not answer
 * within `timeoutMs` (the service starts without Redis: notifications wait in the outbox).
 */
export async function redisVersionAt(url: string, timeoutMs = 3000): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs).unref());
    const info = await Promise.race([client.connect().then(() => client.info('server')), timeout]);
    return /^redis_version:(.+)$/m.exec(info)?.[1]?.trim() ?? null;
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}
