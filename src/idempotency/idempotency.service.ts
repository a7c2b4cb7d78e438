import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { deriveKey, hmacHex } from '../common/crypto/secrets';
import { AppConfig } from '../config/app-config';
import { DomainError } from '../domain/domain-error';
import { IdempotencyRepository, KeyRef, StoredKey } from './idempotency.repository';

/** How long a key replays its first answer (platform.md §6); older records are purged. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;
const PURGE_BATCH = 1000;

/** JSON with object keys sorted at every level, so that key order does not change a request's fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A request that carries an Idempotency-Key: which key, and the keyed fingerprint of its body. */
export interface IdempotentRequest extends KeyRef {
  fingerprint: string;
}

/** What a key already used says: replay the stored answer, or the first request is still between its commits. */
export type PriorUse = { kind: 'REPLAY'; status: number; body: unknown } | { kind: 'IN_FLIGHT'; resourceId: number };

/**
 * Idempotency-Key (platform.md §6). The key is claimed in the transaction that creates the resource,
 * which records the resource's id; the answer is saved when it is known (in the same transaction, or
 * in the second one after a provider call). The same key and body replays the saved answer; while the
 * first request is between its two commits, the caller answers with the resource's current state. The
 * same key with another body is IDEMPOTENCY_KEY_REUSED. The fingerprint is an HMAC with a server key of
 * the body without card number and CVV (the caller strips them), so nothing about a card can be guessed
 * back from it; records are purged after 24 h.
 */
@Injectable()
export class IdempotencyService {
  private readonly fingerprintKey: Buffer;

  constructor(
    private readonly keys: IdempotencyRepository,
    config: AppConfig,
  ) {
    this.fingerprintKey = deriveKey(config.encryptionKey, 'idempotency-request-fingerprint');
  }

  /** The key and fingerprint of a request, or null without a key; VALIDATION_ERROR for a malformed key. */
  prepare(sellerId: number, scope: string, key: string | undefined, body: unknown): IdempotentRequest | null {
    if (key === undefined) return null;
    if (!KEY_PATTERN.test(key)) {
      throw new DomainError('VALIDATION_ERROR', 'Idempotency-Key must be 1 to 255 visible ASCII characters', { field: 'Idempotency-Key' });
    }
    return { sellerId, scope, key, fingerprint: hmacHex(this.fingerprintKey, canonicalJson(body)) };
  }

  /** Before any work: what an earlier use of the key says, or null when the key is free (read-only). */
  async priorUse(request: IdempotentRequest | null): Promise<PriorUse | null> {
    if (!request) return null;
    return this.judge(request, await this.keys.find(request));
  }

  /**
   * Inside the creating transaction: claims the key (null: go on and create), or says what the earlier
   * use of it says. A concurrent request with the same key waits for the first one's commit here.
   */
  async claim(manager: EntityManager, request: IdempotentRequest | null): Promise<PriorUse | null> {
    if (!request) return null;
    if (await this.keys.claim(request, request.fingerprint, manager)) return null;
    const stored = await this.keys.find(request, manager);
    if (stored && stored.createdAt.getTime() < Date.now() - IDEMPOTENCY_WINDOW_MS) {
      await this.keys.deleteOlderThan(request, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS), manager);
      if (await this.keys.claim(request, request.fingerprint, manager)) return null;
    }
    const prior = this.judge(request, stored);
    if (!prior) throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is being processed; retry');
    return prior;
  }

  /** Records which resource the claimed key created (same transaction as the claim). */
  async attachResource(manager: EntityManager, request: IdempotentRequest | null, resourceId: number): Promise<void> {
    if (request) await this.keys.attachResource(request, resourceId, manager);
  }

  /** Saves the answer that later uses of the key replay. */
  async saveResponse(manager: EntityManager, request: IdempotentRequest | null, status: number, body: unknown): Promise<void> {
    if (request) await this.keys.saveResponse(request, status, body, manager);
  }

  /** Deletes every record older than the 24 h window (the scheduled purge). Returns how many went. */
  async purgeExpired(now: Date): Promise<number> {
    const before = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
    let purged = 0;
    for (;;) {
      const batch = await this.keys.purgeOlderThan(before, PURGE_BATCH);
      purged += batch;
      if (batch < PURGE_BATCH) return purged;
    }
  }

  private judge(request: IdempotentRequest, stored: StoredKey | null): PriorUse | null {
    if (!stored || stored.createdAt.getTime() < Date.now() - IDEMPOTENCY_WINDOW_MS) return null;
    if (stored.fingerprint !== null && stored.fingerprint !== request.fingerprint) {
      throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with another request body');
    }
    if (stored.responseStatus !== null) return { kind: 'REPLAY', status: stored.responseStatus, body: stored.responseBody };
    if (stored.resourceId !== null) return { kind: 'IN_FLIGHT', resourceId: stored.resourceId };
    return null;
  }
}
