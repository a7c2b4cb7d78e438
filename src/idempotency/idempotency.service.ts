import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DomainError } from '../domain/domain-error';
import { IdempotencyRepository } from './idempotency.repository';

/** How long a key replays its first answer (platform.md §6). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

export interface IdempotentResult<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** JSON with object keys sorted at every level, so that key order does not change a request's hash. */
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

@Injectable()
export class IdempotencyService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: IdempotencyRepository,
  ) {}

  /**
   * Runs `work` in one transaction with the claim of the key: the same key and request within 24 h
   * replays the stored answer; the same key with another request is IDEMPOTENCY_KEY_REUSED; concurrent
   * requests with one key wait for the first and replay it. A `work` that throws rolls the claim back,
   * so the key can be used again. Without a key, `work` simply runs in a transaction.
   */
  async run<T>(
    params: { sellerId: number; scope: string; key: string | undefined; request: unknown },
    work: (manager: EntityManager) => Promise<{ status: number; body: T }>,
  ): Promise<IdempotentResult<T>> {
    const { sellerId, scope, key } = params;
    if (key === undefined) {
      return { ...(await this.dataSource.transaction(work)), replayed: false };
    }
    if (!KEY_PATTERN.test(key)) {
      throw new DomainError('VALIDATION_ERROR', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    const requestHash = createHash('sha256').update(canonicalJson(params.request)).digest('hex');
    return this.dataSource.transaction(async (manager) => {
      let claimed = await this.keys.claim(sellerId, scope, key, requestHash, manager);
      if (!claimed) {
        const stored = await this.keys.find(sellerId, scope, key, manager);
        if (stored && stored.createdAt.getTime() < Date.now() - IDEMPOTENCY_WINDOW_MS) {
          await this.keys.deleteOlderThan(sellerId, scope, key, new Date(Date.now() - IDEMPOTENCY_WINDOW_MS), manager);
          claimed = await this.keys.claim(sellerId, scope, key, requestHash, manager);
        } else if (stored) {
          if (stored.requestHash !== requestHash) {
            throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with another request body');
          }
          if (stored.responseStatus === null) {
            throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry');
          }
          return { status: stored.responseStatus, body: stored.responseBody as T, replayed: true };
        }
      }
      if (!claimed) {
        throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is being processed; retry');
      }
      const result = await work(manager);
      await this.keys.saveResponse(sellerId, scope, key, result.status, result.body, manager);
      return { ...result, replayed: false };
    });
  }
}
