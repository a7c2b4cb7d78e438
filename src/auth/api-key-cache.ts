import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { describeDatabaseUrl } from '../database/database-url';
import { REDIS_CLIENT } from '../redis/redis.module';
import { ActiveKeyWithSeller } from './api-keys.repository';

/** Most key pairs held; the oldest is dropped first. */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * The verified key pairs of recent requests, and what requests read of their sellers (the profile a
 * sale or a withdrawal needs), so that a request does not read them from PostgreSQL each time. Revocation and blocking are honoured at once, in every instance: the change is published on
 * a Redis channel of this database (`api-keys:<database>`, like Bull's prefix, so that instances on
 * other databases sharing the Redis ignore it), and each instance drops the entries it names. While this
 * instance's subscription is not live (Redis down, reconnecting, SUBSCRIBE not yet confirmed) nothing is
 * read from the cache, and it is emptied when the subscription comes back, since messages may have been
 * missed. A change that cannot be announced is reported to the caller (keyRevoked, sellerChanged). A lookup that raced
 * an invalidation is not stored (generation counter). API_KEY_CACHE_SECONDS bounds an entry's life, as
 * the backstop for changes made outside the service (SQL by hand).
 */
@Injectable()
export class ApiKeyCache implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyCache.name);
  private readonly entries = new Map<string, Entry<ActiveKeyWithSeller>>();
  /** What requests read of each seller (its sales and withdrawal profile), dropped with its pairs. */
  private readonly sellers = new Map<number, Entry<unknown>>();
  private readonly channel: string;
  private readonly ttlMs: number;
  private subscriber: Redis | null = null;
  private live = false;
  private generation = 0;

  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    config: AppConfig,
  ) {
    this.channel = `api-keys:${describeDatabaseUrl(config.databaseUrl).databaseName}`;
    this.ttlMs = config.apiKeyCacheSeconds * 1000;
  }

  async onModuleInit(): Promise<void> {
    if (this.ttlMs === 0) return;
    // No automatic resubscription: ioredis reports 'ready' before it sends SUBSCRIBE again, and a change
    // published in between would be missed by a cache already trusted. SUBSCRIBE is sent here instead,
    // and the cache is trusted only once Redis has confirmed it.
    const subscriber = this.redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, lazyConnect: true, autoResubscribe: false });
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined); // reconnects by itself; the cache is bypassed meanwhile
    subscriber.on('close', () => this.goDark());
    subscriber.on('message', (_channel: string, message: string) => this.apply(message));
    let subscribed = false;
    subscriber.on('ready', () => {
      if (!subscribed) return;
      subscriber.subscribe(this.channel).then(
        () => this.goLive(),
        (error: unknown) => this.logger.warn({ err: error }, 'API key cache off: could not subscribe again to key changes'),
      );
    });
    try {
      await subscriber.connect();
      await subscriber.subscribe(this.channel);
      subscribed = true;
      this.goLive();
    } catch (error) {
      this.logger.warn({ err: error }, 'API key cache off until Redis answers: every request reads its key pair from PostgreSQL');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.goDark();
    this.subscriber?.disconnect();
  }

  /** The cached pair with this public key, when the cache can be trusted. */
  get(publicKey: string): ActiveKeyWithSeller | null {
    return this.fresh(this.entries, publicKey);
  }

  /** What `getSeller`'s caller stored of the seller, when the cache can be trusted. */
  getSeller<T>(sellerId: number): T | null {
    return this.fresh(this.sellers, sellerId) as T | null;
  }

  /** A token to pass to `set`: a lookup started before an invalidation must not be stored after it. */
  snapshot(): number {
    return this.generation;
  }

  set(publicKey: string, key: ActiveKeyWithSeller, snapshot: number): void {
    this.keep(this.entries, publicKey, key, snapshot);
  }

  /** Keeps what was read of the seller (at `snapshot`) until the seller changes, like its pairs. */
  setSeller(sellerId: number, value: unknown, snapshot: number): void {
    this.keep(this.sellers, sellerId, value, snapshot);
  }

  private fresh<K, T>(map: Map<K, Entry<T>>, key: K): T | null {
    if (!this.live) return null;
    const entry = map.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= Date.now()) {
      map.delete(key);
      return null;
    }
    return entry.value;
  }

  private keep<K, T>(map: Map<K, Entry<T>>, key: K, value: T, snapshot: number): void {
    if (!this.live || snapshot !== this.generation) return;
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as K);
    map.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  /**
   * The pair was revoked: dropped here at once, and in the other instances through Redis. False when the
   * change could not be announced: another instance may then accept the pair until its entry expires
   * (API_KEY_CACHE_SECONDS), and the caller must say so.
   */
  async keyRevoked(publicKey: string): Promise<boolean> {
    return this.announce(`key:${publicKey}`);
  }

  /** The seller changed (blocked, unblocked, its permissions or fees): its pairs and what was kept of it are dropped everywhere. False when it could not be announced. */
  async sellerChanged(sellerId: number): Promise<boolean> {
    return this.announce(`seller:${sellerId}`);
  }

  private async announce(message: string): Promise<boolean> {
    this.apply(message);
    try {
      await this.redis.publish(this.channel, message);
      return true;
    } catch (error) {
      this.logger.warn({ err: error, message }, 'Could not announce an API key change through Redis: other instances may keep a cached pair until it expires');
      return false;
    }
  }

  /** Seconds another instance may keep trusting a pair whose change was not announced. */
  get cacheSeconds(): number {
    return this.ttlMs / 1000;
  }

  private apply(message: string): void {
    this.generation += 1;
    if (message.startsWith('key:')) {
      this.entries.delete(message.slice(4));
    } else if (message.startsWith('seller:')) {
      const sellerId = Number(message.slice(7));
      for (const [publicKey, entry] of this.entries) if (entry.value.sellerId === sellerId) this.entries.delete(publicKey);
      this.sellers.delete(sellerId);
    } else {
      this.entries.clear();
      this.sellers.clear();
    }
  }

  private goLive(): void {
    this.entries.clear();
    this.sellers.clear();
    this.generation += 1;
    this.live = true;
  }

  private goDark(): void {
    this.live = false;
    this.entries.clear();
    this.sellers.clear();
    this.generation += 1;
  }
}
