import { EntityManager } from 'typeorm';
import { Lease } from './leases';

/** A runner that records each statement and answers as TypeORM's postgres driver does an UPDATE: [rows, affected]. */
function recordingRunner(rows: unknown[] = [], affected = rows.length) {
  const calls: Array<{ sql: string; parameters: unknown[] }> = [];
  const runner = {
    query: (sql: string, parameters: unknown[] = []) => {
      calls.push({ sql, parameters });
      return Promise.resolve([rows, affected]);
    },
  } as unknown as EntityManager;
  return { runner, calls };
}

const squeezed = (sql: string) => sql.replace(/\s+/g, ' ').trim();

describe('Lease', () => {
  const recovery = new Lease({ table: 'sales', column: 'provider_checked_at', duration: '1 minute' });
  const outbox = new Lease({ table: 'outbox_events', column: 'enqueued_at', idType: 'bigint', duration: { secondsParam: 2 } });

  it('says "this row is free" with the database clock, for a fixed duration or one in a parameter, qualified by an alias', () => {
    expect(recovery.free()).toBe(`(provider_checked_at IS NULL OR provider_checked_at < now() - interval '1 minute')`);
    expect(outbox.free('e')).toBe(`(e.enqueued_at IS NULL OR e.enqueued_at < now() - make_interval(secs => $2))`);
  });

  it('claims in one statement: an UPDATE setting the lease to now() on the candidates, returning the ids unless told', async () => {
    const candidates = `SELECT id FROM sales WHERE status = 'EM_PROCESSAMENTO' AND ${recovery.free()} ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED`;
    const { runner, calls } = recordingRunner([{ id: 7 }, { id: 9 }]);
    await expect(recovery.claim(runner, candidates, [500])).resolves.toEqual([{ id: 7 }, { id: 9 }]);
    expect(calls).toEqual([{ sql: `UPDATE sales SET provider_checked_at = now() WHERE id IN (${candidates}) RETURNING id`, parameters: [500] }]);
  });

  it('returns the columns asked for', async () => {
    const candidates = `SELECT e.id FROM outbox_events e WHERE ${outbox.free('e')} ORDER BY e.id LIMIT $1 FOR UPDATE SKIP LOCKED`;
    const { runner, calls } = recordingRunner([{ id: '3', attempts: 1 }]);
    await expect(outbox.claim(runner, candidates, [100, 60], ['id', 'attempts'])).resolves.toEqual([{ id: '3', attempts: 1 }]);
    expect(squeezed(calls[0].sql)).toBe(squeezed(`UPDATE outbox_events SET enqueued_at = now() WHERE id IN (${candidates}) RETURNING id, attempts`));
    expect(calls[0].parameters).toEqual([100, 60]);
  });

  it('refuses a candidate query that does not skip locked rows or does not look at the lease', () => {
    expect(() => recovery.claimStatement(`SELECT id FROM sales WHERE ${recovery.free()} LIMIT 10 FOR UPDATE`)).toThrow(/SKIP LOCKED/);
    expect(() => recovery.claimStatement(`SELECT id FROM sales LIMIT 10 FOR UPDATE SKIP LOCKED`)).toThrow(/free\(\)/);
    expect(() => recovery.claimStatement(`SELECT id FROM sales WHERE ${recovery.free()} FOR UPDATE SKIP LOCKED`, [])).toThrow(/at least one column/);
    expect(() => recovery.claimStatement(`SELECT id FROM sales WHERE ${recovery.free()} FOR UPDATE SKIP LOCKED`, ['id; DROP TABLE sales'])).toThrow(/identifier/);
  });

  it('holds (takes or renews) the lease of given ids, with an optional extra condition over $2…, and answers how many', async () => {
    const { runner, calls } = recordingRunner([], 2);
    await expect(recovery.hold(runner, [1, 2], `status = 'EM_PROCESSAMENTO'`)).resolves.toBe(2);
    await recovery.hold(runner, [3], 'seller_id = $2', [42]);
    expect(calls).toEqual([
      { sql: `UPDATE sales SET provider_checked_at = now() WHERE id = ANY($1::int[]) AND status = 'EM_PROCESSAMENTO'`, parameters: [[1, 2]] },
      { sql: `UPDATE sales SET provider_checked_at = now() WHERE id = ANY($1::int[]) AND seller_id = $2`, parameters: [[3], 42] },
    ]);
  });

  it('releases the lease of given ids, typed by the id column', async () => {
    const { runner, calls } = recordingRunner([], 1);
    await expect(outbox.release(runner, ['10'])).resolves.toBe(1);
    expect(calls).toEqual([{ sql: `UPDATE outbox_events SET enqueued_at = NULL WHERE id = ANY($1::bigint[])`, parameters: [['10']] }]);
  });

  it('releases the lease of those given ids that meet an extra condition over $2…', async () => {
    const { runner, calls } = recordingRunner([], 1);
    await expect(recovery.release(runner, [1, 2], `status = 'EM_PROCESSAMENTO'`)).resolves.toBe(1);
    await recovery.release(runner, [3], 'seller_id = $2', [42]);
    expect(calls).toEqual([
      { sql: `UPDATE sales SET provider_checked_at = NULL WHERE id = ANY($1::int[]) AND status = 'EM_PROCESSAMENTO'`, parameters: [[1, 2]] },
      { sql: `UPDATE sales SET provider_checked_at = NULL WHERE id = ANY($1::int[]) AND seller_id = $2`, parameters: [[3], 42] },
    ]);
  });

  it('runs nothing for no ids', async () => {
    const { runner, calls } = recordingRunner();
    await expect(recovery.hold(runner, [])).resolves.toBe(0);
    await expect(recovery.release(runner, [])).resolves.toBe(0);
    expect(calls).toEqual([]);
  });

  it('takes only plain identifiers and whole durations', () => {
    expect(() => new Lease({ table: 'sales; --', column: 'provider_checked_at', duration: '1 minute' })).toThrow(/identifier/);
    expect(() => new Lease({ table: 'sales', column: 'provider_checked_at', duration: '1.5 minutes' })).toThrow(/whole number/);
    expect(() => new Lease({ table: 'sales', column: 'provider_checked_at', duration: { secondsParam: 0 } })).toThrow(/parameter/);
    expect(new Lease({ table: 'sales', column: 'provider_checked_at', duration: '90 seconds' }).interval).toBe(`interval '90 seconds'`);
    expect(() => recovery.free('e.x')).toThrow(/identifier/);
  });
});
