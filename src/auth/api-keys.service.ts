import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { matchesSha256Hex, randomToken, sha256Hex } from '../common/crypto/secrets';
import { DomainError } from '../domain/domain-error';
import { ApiKeyCache } from './api-key-cache';
import { ActiveKeyWithSeller, ApiKeysRepository } from './api-keys.repository';

export interface KeyPair {
  publicKey: string;
  privateKey: string;
}

/** A pair as its seller sees it: never the private key. */
export interface KeyPairView {
  publicKey: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const PUBLIC_KEY_PATTERN = /^pk_[A-Za-z0-9_-]{16,60}$/;
const PRIVATE_KEY_PATTERN = /^sk_[A-Za-z0-9_-]{16,60}$/;
/** A pair's last use is written at most this often (per instance). */
const LAST_USE_PERIOD_MS = 60_000;
/** Pairs whose last write this instance remembers; the oldest is forgotten first. */
const MAX_TOUCHES_REMEMBERED = 10_000;

/** Whether a change of a pair or a seller's access reached the other instances' caches; a warning to show when not. */
export interface Propagation {
  announced: boolean;
  warning?: string;
}

/** Issues, revokes and checks API key pairs (spec §5). */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly cache: ApiKeyCache,
  ) {}

  /** When this instance last marked each pair used (or learnt that another had), by key id. */
  private readonly lastTouch = new Map<number, number>();

  /** A new pair for the seller. The private key is returned once; only its hash is stored. */
  async issue(sellerId: number, manager?: EntityManager): Promise<KeyPair> {
    const pair = { publicKey: randomToken('pk_'), privateKey: randomToken('sk_') };
    await this.keys.insert(sellerId, pair.publicKey, sha256Hex(pair.privateKey), manager);
    return pair;
  }

  /** Revokes the pair (the operator); with `sellerId`, only if it is that seller's (the seller's dashboard). */
  async revoke(publicKey: string, sellerId?: number): Promise<Propagation> {
    if (!(await this.keys.revokeIfActive(publicKey, sellerId))) {
      throw new DomainError('NOT_FOUND', 'No active API key with this public key');
    }
    return this.propagation(await this.cache.keyRevoked(publicKey));
  }

  /**
   * The seller changed (blocked or unblocked, its permissions or fees): its pairs are checked again and
   * its profile read again from the next request on, in every instance.
   */
  async sellerAccessChanged(sellerId: number): Promise<Propagation> {
    return this.propagation(await this.cache.sellerChanged(sellerId));
  }

  /**
   * What `read` answers of the seller, kept beside its key pairs (API_KEY_CACHE_SECONDS at most) and
   * dropped in every instance when the seller changes (sellerAccessChanged); read each time while the
   * cache cannot be trusted.
   */
  async sellerProfile<T>(sellerId: number, read: () => Promise<T>): Promise<T> {
    const cached = this.cache.getSeller<T>(sellerId);
    if (cached !== null) return cached;
    const snapshot = this.cache.snapshot();
    const value = await read();
    this.cache.setSeller(sellerId, value, snapshot);
    return value;
  }

  private propagation(announced: boolean): Propagation {
    if (announced) return { announced };
    return {
      announced,
      warning: `Saved, but not announced to the other instances (Redis unreachable): they may keep accepting the old state for up to ${this.cache.cacheSeconds} s`,
    };
  }

  /** The seller's pairs, newest first, with their creation, last use and revocation. */
  async pairsOf(sellerId: number): Promise<KeyPairView[]> {
    return (await this.keys.ofSeller(sellerId)).map((key) => ({
      publicKey: key.publicKey,
      createdAt: key.createdAt,
      lastUsedAt: key.lastUsedAt,
      revokedAt: key.revokedAt,
    }));
  }

  /**
   * The seller id the pair belongs to. Missing, malformed or unknown keys, a revoked pair, or two keys
   * of different pairs: UNAUTHORIZED. A blocked seller: FORBIDDEN.
   */
  async authenticate(publicKey: string | undefined, privateKey: string | undefined): Promise<number> {
    if (!publicKey || !privateKey) {
      throw new DomainError('UNAUTHORIZED', 'Missing API keys: send X-Api-Public-Key and X-Api-Private-Key');
    }
    const wellFormed = PUBLIC_KEY_PATTERN.test(publicKey) && PRIVATE_KEY_PATTERN.test(privateKey);
    const key = wellFormed ? await this.activeKey(publicKey) : null;
    // Compare even when the key is unknown, so that timing tells nothing about which part was wrong.
    const matches = matchesSha256Hex(privateKey, key?.privateKeyHash);
    if (!key || !matches) {
      throw new DomainError('UNAUTHORIZED', 'Invalid API key pair');
    }
    if (key.sellerBlocked) {
      throw new DomainError('FORBIDDEN', 'This account is blocked');
    }
    // At most one write a minute per pair, and only for a pair that just authenticated.
    if (this.lastUseDue(key)) await this.keys.touchLastUsed(key.id);
    return key.sellerId;
  }

  /**
   * Whether this request should mark the pair used. A cached pair keeps the `lastUseStale` it was read
   * with, so the minute is counted here: from the last write, or from the read that found a recent one.
   * The time is taken before the write, so that a burst of one pair's requests writes once.
   */
  private lastUseDue(key: ActiveKeyWithSeller): boolean {
    const now = Date.now();
    const last = this.lastTouch.get(key.id);
    const due = last === undefined ? key.lastUseStale : now - last >= LAST_USE_PERIOD_MS;
    if (due || last === undefined) {
      this.lastTouch.delete(key.id);
      if (this.lastTouch.size >= MAX_TOUCHES_REMEMBERED) this.lastTouch.delete(this.lastTouch.keys().next().value as number);
      this.lastTouch.set(key.id, now);
    }
    return due;
  }

  /** The unrevoked pair with its seller's blocked flag: from the cache, else from PostgreSQL (then cached). */
  private async activeKey(publicKey: string): Promise<ActiveKeyWithSeller | null> {
    const cached = this.cache.get(publicKey);
    if (cached) return cached;
    const snapshot = this.cache.snapshot();
    const key = await this.keys.findActiveByPublicKey(publicKey);
    if (key) this.cache.set(publicKey, key, snapshot);
    return key;
  }
}
