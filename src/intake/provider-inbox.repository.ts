import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Lease } from '../database/leases';

/** What one notification named, waiting to be checked with its provider. */
export interface InboxItem {
  id: number;
  provider: string;
  kind: string;
  objectId: string;
  /** How many notifications named it while it waited (a check is kept only if none came meanwhile). */
  notifications: number;
  /** The provider's own words about it, when a notification said some (never what moves anything). */
  note: string | null;
}

/** The waiting notifications are handed to one instance at a time for a minute (a process that dies lets them go). */
const INBOX_LEASE = new Lease({ table: 'provider_inbox', column: 'claimed_at', duration: '1 minute' });

/** The providers' notifications (provider_inbox), kept before they are answered and checked with their provider. */
@Injectable()
export class ProviderInboxRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * A notification's ids, kept before it is answered: each once while it waits. One already waiting is
   * counted again and made due now: it may be under a check that read the provider before this change.
   * All or nothing: false, and nothing kept, when the ids not already waiting would take this provider's
   * inbox of this kind past `max` (counted under a lock per provider and kind, so that two notifications
   * at once cannot both fit).
   */
  async enqueue(provider: string, kind: string, objectIds: string[], max: number, notes: Array<string | null> = []): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('provider-inbox'), hashtext($1 || '/' || $2))`, [provider, kind]);
      const [{ fits }]: Array<{ fits: boolean }> = await manager.query(
        `WITH ids AS (SELECT DISTINCT unnest($3::varchar[]) AS id),
              fresh AS (SELECT id FROM ids WHERE NOT EXISTS (SELECT 1 FROM provider_inbox WHERE provider = $1 AND kind = $2 AND object_id = ids.id))
         SELECT (SELECT count(*) FROM (SELECT 1 FROM provider_inbox WHERE provider = $1 AND kind = $2 LIMIT $4) waiting) + (SELECT count(*) FROM fresh) <= $4 AS fits`,
        [provider, kind, objectIds, max],
      );
      if (!fits) return false;
      await manager.query(
        `INSERT INTO provider_inbox (provider, kind, object_id, note)
         SELECT DISTINCT ON (t.id) $1::varchar, $2::varchar, t.id, left(t.note, 500) FROM unnest($3::varchar[], $4::varchar[]) AS t(id, note) ORDER BY t.id, t.note NULLS LAST
         ON CONFLICT (provider, kind, object_id) DO UPDATE SET notifications = provider_inbox.notifications + 1, next_attempt_at = now(),
                                                             note = COALESCE(EXCLUDED.note, provider_inbox.note)`,
        [provider, kind, objectIds, objectIds.map((_, index) => notes[index] ?? null)],
      );
      return true;
    });
  }

  /** Of these providers' ids, those due to be checked with their provider, the latest due first (a notification just come is not held behind a backlog), each leased for a minute. */
  async claim(providers: string[], limit: number): Promise<InboxItem[]> {
    const rows = await INBOX_LEASE.claim<{ id: number; provider: string; kind: string; object_id: string; notifications: number; note: string | null }>(
      this.dataSource,
      `SELECT id FROM provider_inbox WHERE provider = ANY($2::varchar[]) AND next_attempt_at <= now() AND ${INBOX_LEASE.free()} ORDER BY next_attempt_at DESC LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit, providers],
      ['id', 'provider', 'kind', 'object_id', 'notifications', 'note'],
    );
    return rows.map((row) => ({ id: row.id, provider: row.provider, kind: row.kind, objectId: row.object_id, notifications: row.notifications, note: row.note }));
  }

  /** A check done (or one that can never be made): the row dropped, unless another notification came meanwhile (then it is given back, to be checked again). */
  async done(item: InboxItem): Promise<void> {
    const [, dropped] = (await this.dataSource.query(`DELETE FROM provider_inbox WHERE id = $1 AND notifications = $2`, [item.id, item.notifications])) as [unknown, number];
    if (dropped === 0) await INBOX_LEASE.release(this.dataSource, [item.id]);
  }

  /** A check that failed: tried again later, later each time (up to 10 minutes apart). */
  async retry(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE provider_inbox SET attempts = attempts + 1, claimed_at = NULL,
              next_attempt_at = now() + make_interval(secs => least(600, 2 ^ least(attempts, 10))) WHERE id = $1`,
      [id],
    );
  }

  /**
   * Of these ids, those whose notification came less than a minute ago and is not checked yet (the worker
   * is about to settle them). One waiting longer (behind a flood of forged ids, or claimed by an instance
   * that hangs) is not among them: the provider's own reconciliation may settle it.
   */
  async notifiedUnchecked(provider: string, kind: string, objectIds: string[]): Promise<Set<string>> {
    if (objectIds.length === 0) return new Set();
    const rows: Array<{ object_id: string }> = await this.dataSource.query(
      `SELECT object_id FROM provider_inbox WHERE provider = $1 AND kind = $2 AND object_id = ANY($3::varchar[]) AND attempts = 0 AND received_at > now() - interval '1 minute'`,
      [provider, kind, objectIds],
    );
    return new Set(rows.map((row) => row.object_id));
  }
}
