import { Pool } from 'pg';
import { preparingPg } from '../../src/database/prepared-statements';

/**
 * The service's pool prepares each parameterized statement once per connection. These check, on a
 * real PostgreSQL, that it does (the text is prepared and reused), that statements without parameters
 * stay unprepared, and that a table changed by a migration while the process runs costs one failed
 * statement per connection, not a connection that fails for good.
 */
describe('Prepared statements (database/prepared-statements.ts)', () => {
  const table = `prepared_check_${process.pid}`;
  let pool: Pool;

  beforeAll(async () => {
    pool = new preparingPg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, label text NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES (1, 'one'), (2, 'two')`);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });

  const preparedTexts = async (): Promise<string[]> =>
    (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time')).rows.map((row) => row.statement);

  it('prepares a parameterized text once on a connection and reuses it with other values', async () => {
    const sql = `SELECT * FROM ${table} WHERE id = $1`;
    expect((await pool.query(sql, [1])).rows).toEqual([{ id: 1, label: 'one' }]);
    expect((await pool.query(sql, [2])).rows).toEqual([{ id: 2, label: 'two' }]);
    expect((await preparedTexts()).filter((text) => text === sql)).toHaveLength(1);
  });

  it('leaves statements without parameters unprepared', async () => {
    const sql = `SELECT count(*)::int AS n FROM ${table}`;
    expect((await pool.query(sql)).rows).toEqual([{ n: 2 }]);
    expect(await preparedTexts()).not.toContain(sql);
  });

  it('after a column is added, the stale statement fails once and the next call reads the new shape', async () => {
    const sql = `SELECT * FROM ${table} WHERE id = $1`;
    await pool.query(sql, [1]);
    await pool.query(`ALTER TABLE ${table} ADD COLUMN note text NOT NULL DEFAULT 'added'`);
    await expect(pool.query(sql, [1])).rejects.toMatchObject({ code: '0A000' });
    expect((await pool.query(sql, [1])).rows).toEqual([{ id: 1, label: 'one', note: 'added' }]);
    expect((await pool.query(sql, [2])).rows).toEqual([{ id: 2, label: 'two', note: 'added' }]);
  });
});
