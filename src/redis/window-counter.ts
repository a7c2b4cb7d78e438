import Redis from 'ioredis';

/** A hit counted in a fixed window: how many hits the window holds now, and how long it still lasts. */
export interface WindowCount {
  count: number;
  secondsLeft: number;
}

/**
 * Counts one hit under `key` in a fixed window of `windowSeconds` that starts with the key's first hit.
 * One MULTI: `SET key 0 EX window NX` starts the window only when the key is new, `INCR` keeps its
 * expiry. Works on every Redis the service runs on (no `EXPIRE ... NX`, which needs Redis 7). Throws
 * when Redis does not answer; the caller decides whether that fails open.
 */
export async function countInWindow(redis: Redis, key: string, windowSeconds: number): Promise<WindowCount> {
  const results = await redis.multi().set(key, 0, 'EX', windowSeconds, 'NX').incr(key).ttl(key).exec();
  if (!results) throw new Error(`the window count of ${key} was discarded`);
  for (const [error] of results) if (error) throw error;
  const count = Number(results[1][1]);
  const ttl = Number(results[2][1]);
  return { count, secondsLeft: ttl > 0 ? ttl : windowSeconds };
}
