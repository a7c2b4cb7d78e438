import { DataSource, EntityManager } from 'typeorm';

/**
 * Leases: how the scheduled jobs share work between instances (issue 20). Every cron that claims rows
 * (card sales left EM_PROCESSAMENTO, withdrawals without news from their payout provider, subscriptions
 * due for billing, outbox events due for delivery) claims them through a Lease, so there is one scheme,
 * written once:
 *
 * - A row is leased while its lease column holds a time less than the lease's duration ago; NULL, or a
 *   time older than that, is free. The column is set to `now()` when the lease is taken and to NULL when
 *   it is given back, so a worker that dies without giving it back holds it only for the duration.
 * - Times are the database's: `now()` both to take a lease and to tell whether it is free, never a
 *   caller's clock (an instance's drift, or the sandbox scheduler's `now`, cannot shorten a lease).
 *   `now()` is the start of the statement's transaction: a lease taken through a transaction's manager
 *   dates from when that transaction began, and is seen by others once it commits.
 * - A claim is one statement, `UPDATE <table> SET <column> = now() WHERE <id> IN (<candidates>)
 *   RETURNING …`, whose candidate query lists the free rows `FOR UPDATE SKIP LOCKED`: instances claiming
 *   together skip each other's rows instead of waiting on them, and each row is leased to one of them.
 *   Run through the data source, the lease commits at once, so that the work (a provider call, a
 *   queue add) can then be done outside any transaction.
 *
 * The candidate query stays the caller's (its conditions, ORDER BY and LIMIT decide which index serves
 * the claim; test/e2e/query-plans checks them): it puts `lease.free()` among its conditions. Table and
 * column names are the code's own constants, checked as plain identifiers; values travel as parameters.
 */

/** Where a lease's statements run: the data source (each statement its own transaction) or a transaction's manager. */
export type LeaseRunner = DataSource | EntityManager;

/**
 * How long a lease lasts: an interval literal (`'1 minute'`, `'90 seconds'`), or the number of seconds in
 * parameter `$n` of the claim's statement (`{ secondsParam: 2 }`) when the caller chooses it per claim.
 */
export type LeaseDuration = `${number} ${'second' | 'seconds' | 'minute' | 'minutes' | 'hour' | 'hours'}` | { secondsParam: number };

export interface LeaseOptions {
  /** The table of the leased rows. */
  table: string;
  /** The timestamptz column holding when the lease was taken (NULL: never, or given back). */
  column: string;
  /** The rows' key column; `id` unless told. */
  idColumn?: string;
  /** The SQL type of the key, for the arrays of ids hold and release take; `int` unless told. */
  idType?: 'int' | 'bigint';
  duration: LeaseDuration;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
const INTERVAL = /^[1-9]\d* (second|minute|hour)s?$/;
const SKIP_LOCKED = /\bFOR\s+UPDATE\s+SKIP\s+LOCKED\b/i;

function identifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`Lease: ${what} "${name}" is not a plain SQL identifier`);
  return name;
}

function intervalOf(duration: LeaseDuration): string {
  if (typeof duration === 'object') {
    if (!Number.isInteger(duration.secondsParam) || duration.secondsParam < 1) throw new Error(`Lease: no parameter $${duration.secondsParam}`);
    return `make_interval(secs => $${duration.secondsParam})`;
  }
  if (!INTERVAL.test(duration)) throw new Error(`Lease: "${duration}" is not a whole number of seconds, minutes or hours`);
  return `interval '${duration}'`;
}

/** One kind of lease: a table's rows leased through one of its columns for one duration. */
export class Lease {
  readonly table: string;
  readonly column: string;
  readonly idColumn: string;
  readonly idType: 'int' | 'bigint';
  /** The duration as an SQL interval expression. */
  readonly interval: string;

  constructor(options: LeaseOptions) {
    this.table = identifier(options.table, 'table');
    this.column = identifier(options.column, 'lease column');
    this.idColumn = identifier(options.idColumn ?? 'id', 'id column');
    this.idType = options.idType ?? 'int';
    if (this.idType !== 'int' && this.idType !== 'bigint') throw new Error(`Lease: id type "${String(this.idType)}" is neither int nor bigint`);
    this.interval = intervalOf(options.duration);
  }

  /**
   * The condition "this row's lease is free" (never taken, given back, or taken longer ago than the
   * duration), for the caller's candidate query; `alias` qualifies the column when the query names the
   * table so: `(e.enqueued_at IS NULL OR e.enqueued_at < now() - interval '1 minute')`.
   */
  free(alias?: string): string {
    const column = alias === undefined ? this.column : `${identifier(alias, 'alias')}.${this.column}`;
    return `(${column} IS NULL OR ${column} < now() - ${this.interval})`;
  }

  /** The claim's statement around `candidates` (see claim). */
  claimStatement(candidates: string, returning: readonly string[] = [this.idColumn]): string {
    if (!SKIP_LOCKED.test(candidates)) throw new Error(`Lease on ${this.table}: the candidate query must lock its rows FOR UPDATE SKIP LOCKED`);
    if (!new RegExp(`\\b${this.column}\\b`).test(candidates)) {
      throw new Error(`Lease on ${this.table}: the candidate query must pass over leased rows (put lease.free() among its conditions)`);
    }
    if (returning.length === 0) throw new Error(`Lease on ${this.table}: a claim returns at least one column`);
    const columns = returning.map((name) => identifier(name, 'returned column')).join(', ');
    return `UPDATE ${this.table} SET ${this.column} = now() WHERE ${this.idColumn} IN (${candidates}) RETURNING ${columns}`;
  }

  /**
   * Leases the rows `candidates` selects and returns them (`returning`: their id unless told), in one
   * statement. `candidates` is a query of this table's ids over `parameters` ($1…) that keeps only free
   * rows (`free()` among its conditions) and locks them `FOR UPDATE SKIP LOCKED`; both are checked. Its
   * ORDER BY and LIMIT pick the batch; the rows come back in no particular order.
   */
  async claim<R extends object = { id: number }>(
    runner: LeaseRunner,
    candidates: string,
    parameters: unknown[],
    returning: readonly string[] = [this.idColumn],
  ): Promise<R[]> {
    const [rows] = (await runner.query(this.claimStatement(candidates, returning), parameters)) as [R[], number];
    return rows;
  }

  /**
   * The statement of hold: the rows of ids $1 (and `extraCondition`, over parameters $2…), leased from now
   * whether or not their lease was free.
   */
  holdStatement(extraCondition?: string): string {
    return `UPDATE ${this.table} SET ${this.column} = now() WHERE ${this.idColumn} = ANY($1::${this.idType}[])${extraCondition ? ` AND ${extraCondition}` : ''}`;
  }

  /**
   * Takes or renews the lease of these rows, those of them meeting `extraCondition` (SQL over
   * `extraParameters` as $2…) if given, from now: a worker keeps rows out of the claims while it works on
   * them, renewing before the duration runs out. How many rows were leased; nothing is run for no ids.
   */
  async hold(runner: LeaseRunner, ids: ReadonlyArray<number | string>, extraCondition?: string, extraParameters: unknown[] = []): Promise<number> {
    if (ids.length === 0) return 0;
    const [, affected] = (await runner.query(this.holdStatement(extraCondition), [ids, ...extraParameters])) as [unknown, number];
    return affected;
  }

  /** The statement of release: the lease of the rows of ids $1 (and `extraCondition`, over parameters $2…) given back. */
  releaseStatement(extraCondition?: string): string {
    return `UPDATE ${this.table} SET ${this.column} = NULL WHERE ${this.idColumn} = ANY($1::${this.idType}[])${extraCondition ? ` AND ${extraCondition}` : ''}`;
  }

  /**
   * Gives back the lease of these rows at once, whoever holds it, so that the next claim may take them
   * again without waiting for the duration; only those meeting `extraCondition` (SQL over
   * `extraParameters` as $2…) if given, when the others can never be claimed again and rewriting their
   * rows would cost an UPDATE for nothing. How many rows were released; nothing is run for no ids.
   */
  async release(runner: LeaseRunner, ids: ReadonlyArray<number | string>, extraCondition?: string, extraParameters: unknown[] = []): Promise<number> {
    if (ids.length === 0) return 0;
    const [, affected] = (await runner.query(this.releaseStatement(extraCondition), [ids, ...extraParameters])) as [unknown, number];
    return affected;
  }
}
