import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CteStatement } from '../database/cte-statement';
import { Lease } from '../database/leases';
import { PlainRows } from '../database/plain-rows';
import { Cents } from '../domain/money';
import { WithdrawalStatus } from '../domain/withdrawal-status';
import { WithdrawalEntity } from './entities/withdrawal.entity';

/** The withdrawal recovery job's lease on a withdrawal (provider_checked_at, a minute), taken by claimWithdrawalsToCheck. */
const RECOVERY_LEASE = new Lease({ table: 'withdrawals', column: 'provider_checked_at', duration: '1 minute' });

@Injectable()
export class CashoutRepository {
  private readonly rows: PlainRows<WithdrawalEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new PlainRows(dataSource.getMetadata(WithdrawalEntity));
  }

  /** Writes the withdrawal and its first status line in one statement; the row as stored (no re-read). */
  /** An id for a withdrawal written by addIfFunded (taken from the table's sequence, outside any lock). */
  async nextId(manager: EntityManager): Promise<number> {
    const [row]: Array<{ id: string }> = await manager.query(`SELECT nextval(pg_get_serial_sequence('withdrawals', 'id')) AS id`);
    return Number(row.id);
  }

  /**
   * Adds to `statement` the withdrawal (its id given) and its first status line, written only when
   * `condition` holds. Answers the name of the CTE holding the row as stored (none when not written).
   */
  addIfFunded(statement: CteStatement, withdrawal: Partial<WithdrawalEntity>, condition: string): string {
    const written = statement.with(statement.name('withdrawal'), `${this.rows.insertWhere(statement, withdrawal, condition)} RETURNING *`);
    statement.with(
      statement.name('withdrawal_history'),
      `INSERT INTO withdrawal_status_changes (withdrawal_id, previous_status, status) SELECT id, NULL, status FROM ${written}`,
    );
    return written;
  }

  /** The withdrawal of a row read with `SELECT *` or `RETURNING *`. */
  hydrate(row: Record<string, unknown>): WithdrawalEntity {
    return this.rows.hydrate(row);
  }

  async findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<WithdrawalEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM withdrawals WHERE id = $1', [id]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0]);
  }

  /** The withdrawal locked for the caller's transaction. */
  async findByIdForUpdate(id: number, manager: EntityManager): Promise<WithdrawalEntity | null> {
    const rows: Array<Record<string, unknown>> = await manager.query('SELECT * FROM withdrawals WHERE id = $1 FOR UPDATE', [id]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0]);
  }

  /**
   * Records the payout provider's id once; a second writer (the queue and the recovery job together)
   * changes nothing. In the caller's transaction when given one.
   */
  async setExternalIdIfUnset(id: number, externalId: string, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query(`UPDATE withdrawals SET external_id = $2, updated_at = now() WHERE id = $1 AND external_id IS NULL`, [id, externalId]);
  }

  /**
   * One attempt to send a PENDING withdrawal's payout, recorded before its call: counted, its start time
   * kept, and the provider's id of the payout fixed at the first (`providerReference`; kept as it is on
   * later ones). Only when the last attempt started at least `spacingMs` ago (database clock): whatever an
   * earlier attempt did at the provider shows in a look-up by then. `sendUnder`: the id to send under;
   * `notBefore`: the last attempt is too recent, the next may be made then; null: not PENDING any more.
   */
  async recordPayoutAttempt(id: number, providerReference: string, spacingMs: number): Promise<{ sendUnder: string } | { notBefore: Date } | null> {
    const [row]: Array<{ send_under: string | null; not_before: Date | null }> = await this.dataSource.query(
      `WITH attempt AS (
         UPDATE withdrawals SET payout_attempts = payout_attempts + 1, last_payout_attempt_at = now(),
                provider_reference = COALESCE(provider_reference, $2)
          WHERE id = $1 AND status = 'PENDING'
            AND (last_payout_attempt_at IS NULL OR last_payout_attempt_at <= now() - make_interval(secs => $3::double precision / 1000))
          RETURNING provider_reference)
       SELECT (SELECT provider_reference FROM attempt) AS send_under,
              (SELECT last_payout_attempt_at + make_interval(secs => $3::double precision / 1000) FROM withdrawals WHERE id = $1 AND status = 'PENDING') AS not_before`,
      [id, providerReference, spacingMs],
    );
    if (row.send_under !== null) return { sendUnder: row.send_under };
    return row.not_before === null ? null : { notBefore: row.not_before };
  }

  /** The next look-up of a withdrawal is due at `at` (not before its backoff's). */
  async checkAgainAt(id: number, at: Date): Promise<void> {
    await this.dataSource.query(`UPDATE withdrawals SET payout_check_at = $2 WHERE id = $1`, [id, at]);
  }

  /** The withdrawal of `provider` whose payout the provider keeps under its own id `providerReference`. */
  async findByProviderReference(provider: string, providerReference: string): Promise<WithdrawalEntity | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM withdrawals WHERE provider = $1 AND provider_reference = $2', [provider, providerReference]);
    return rows.length === 0 ? null : this.rows.hydrate(rows[0]);
  }

  /**
   * Open withdrawals (PENDING or PROCESSING) with no news for `ageSeconds` by the database's clock (their
   * payout's answer or callback may be lost) whose next look-up is due, each leased for a minute
   * (provider_checked_at) so that instances running the job together do not ask about it at once; with
   * the look-ups made of each so far (its backoff).
   */
  async claimWithdrawalsToCheck(ageSeconds: number, sellerId: number | null, limit: number, providers: readonly string[]): Promise<Array<{ id: number; checks: number }>> {
    const rows = await RECOVERY_LEASE.claim<{ id: number; payout_checks: number }>(
      this.dataSource,
      `SELECT id FROM withdrawals
        WHERE status IN ('PENDING', 'PROCESSING') AND updated_at <= now() - make_interval(secs => $1)
          AND (payout_check_at IS NULL OR payout_check_at <= now())
          AND ($2::int IS NULL OR seller_id = $2) AND provider = ANY($4::varchar[])
          AND ${RECOVERY_LEASE.free()}
        ORDER BY updated_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [ageSeconds, sellerId, limit, providers],
      ['id', 'payout_checks'],
    );
    return rows.map((row) => ({ id: row.id, checks: row.payout_checks }));
  }

  /** The recovery job's leases on these withdrawals given back once it has asked about them: their next look-up is when payout_check_at says. */
  async releaseChecks(ids: number[]): Promise<void> {
    await RECOVERY_LEASE.release(this.dataSource, ids);
  }

  /** One more look-up counted for each of these withdrawals, the next due `delaySeconds` from now (database clock). */
  async scheduleNextChecks(next: Array<{ id: number; delaySeconds: number }>): Promise<void> {
    if (next.length === 0) return;
    await this.dataSource.query(
      `UPDATE withdrawals w SET payout_checks = w.payout_checks + 1, payout_check_at = now() + make_interval(secs => d.delay)
         FROM unnest($1::int[], $2::int[]) AS d(id, delay) WHERE w.id = d.id`,
      [next.map((row) => row.id), next.map((row) => row.delaySeconds)],
    );
  }

  /** Saves a move only if the withdrawal is still in `expected`; false when someone else moved it first. */
  async updateStatusIfCurrent(
    id: number,
    expected: WithdrawalStatus,
    changes: { status: WithdrawalStatus; processedAt: Date | null; failureReason?: string | null; providerAmountCents?: Cents },
    manager: EntityManager,
  ): Promise<boolean> {
    const [, affected]: [unknown, number] = await manager.query(
      `UPDATE withdrawals SET status = $3, processed_at = $4, failure_reason = COALESCE($5, failure_reason),
              provider_amount_cents = COALESCE($6::bigint, provider_amount_cents), updated_at = now()
        WHERE id = $1 AND status = $2`,
      [id, expected, changes.status, changes.processedAt, changes.failureReason ?? null, changes.providerAmountCents ?? null],
    );
    if (affected !== 1) return false;
    await this.recordStatus(id, expected, changes.status, manager);
    return true;
  }

  /** One line of the withdrawal's status history, in the transaction of the change. */
  async recordStatus(withdrawalId: number, previous: WithdrawalStatus | null, status: WithdrawalStatus, manager: EntityManager): Promise<void> {
    await manager.query('INSERT INTO withdrawal_status_changes (withdrawal_id, previous_status, status) VALUES ($1, $2, $3)', [withdrawalId, previous, status]);
  }

  /** The withdrawal's status history, oldest first. */
  statusHistory(withdrawalId: number): Promise<Array<{ previousStatus: WithdrawalStatus | null; status: WithdrawalStatus; changedAt: Date }>> {
    return this.dataSource.query(
      `SELECT previous_status AS "previousStatus", status, changed_at AS "changedAt" FROM withdrawal_status_changes WHERE withdrawal_id = $1 ORDER BY id`,
      [withdrawalId],
    );
  }

  /** A page of the seller's withdrawals, newest first, with the total count. */
  /** The withdrawals of `provider` asked for in [from, to) (reconciliation with the provider's list), oldest first. */
  async ofProviderBetween(provider: string, from: Date, to: Date): Promise<WithdrawalEntity[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.manager.query(
      'SELECT * FROM withdrawals WHERE provider = $1 AND created_at >= $2 AND created_at < $3 ORDER BY id',
      [provider, from, to],
    );
    return rows.map((row) => this.rows.hydrate(row));
  }

  async page(sellerId: number, page: number, limit: number): Promise<{ rows: WithdrawalEntity[]; total: number }> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT * FROM withdrawals WHERE seller_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3',
      [sellerId, limit, (page - 1) * limit],
    );
    const [{ total }]: Array<{ total: string }> = await this.dataSource.query('SELECT count(*) AS total FROM withdrawals WHERE seller_id = $1', [sellerId]);
    return { rows: rows.map((row) => this.rows.hydrate(row)), total: Number(total) };
  }
}
