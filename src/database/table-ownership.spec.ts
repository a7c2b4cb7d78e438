/**
 * The lint rule that keeps each table written by its owner only (eslint-rules/table-ownership.cjs) and
 * its map (eslint-rules/table-owners.json): what the rule reports and what it lets through, and a map
 * that names an owner for every table of migrations/ and every entity of src/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuleTester } from 'eslint';
import { parser } from 'typescript-eslint';
import plugin from '../../eslint-rules/table-ownership.cjs';
import owners from '../../eslint-rules/table-owners.json';

const root = join(__dirname, '..', '..');
/** A file of the code base as the rule sees it: relative to the linter's cwd, which RuleTester takes from the process. */
const file = (relative: string) => join(process.cwd(), relative);
const PIX = file('src/pix/pix-receipts.repository.ts');
const SALES_OWNER = 'src/sales/sales.repository.ts';
const SUBSCRIPTIONS_OWNER = 'src/subscriptions/subscriptions.repository.ts';

const tester = new RuleTester({ languageOptions: { parser } });

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The report of a write to `table` outside its owner, naming both. */
const notOwner = (table: string, owner: string) => ({ message: new RegExp(`writes table \`${escape(table)}\`, which only its owner ${escape(owner)} may write: call a method of that repository`) });
/** An invalid case: `code` in the PSP's repository writes the sales table. */
const salesWrite = (code: string) => ({ code, filename: PIX, errors: [notOwner('sales', SALES_OWNER)] });

describe('table-ownership/writes-through-owner', () => {
  tester.run('writes-through-owner', plugin.rules['writes-through-owner'], {
    valid: [
      // The owner writes its tables, in SQL, through TypeORM and through the src/database helpers.
      { code: "await manager.query(`UPDATE sales SET status = 'PAGO' WHERE id = $1`, [id]);", filename: file(SALES_OWNER) },
      { code: 'await manager.query(`INSERT INTO sale_items (sale_id) VALUES ($1)`, [id]);', filename: file(SALES_OWNER) },
      { code: "const LEASE = new Lease({ table: 'sales', column: 'provider_checked_at', duration: '1 minute' });", filename: file(SALES_OWNER) },
      { code: 'await manager.getRepository(SubscriptionEntity).update({ id }, changes);', filename: file(SUBSCRIPTIONS_OWNER) },
      { code: 'await updateRows(manager, SubscriptionEntity, updates);', filename: file(SUBSCRIPTIONS_OWNER) },
      // Elsewhere: reads, locks, an upsert's DO UPDATE on the file's own table, prose, a table named at run time.
      { code: 'await manager.query(`SELECT id FROM sales WHERE status = $1 FOR UPDATE SKIP LOCKED`, [s]);', filename: PIX },
      { code: 'await manager.query(`SELECT id FROM subscriptions WHERE id = $1 FOR NO KEY UPDATE`, [id]);', filename: PIX },
      { code: "await q('INSERT INTO pix_reconciliation_cursor (id, checked_until) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET claimed_at = NULL');", filename: PIX },
      { code: "logger.warn('Could not update sales for this seller; retrying');", filename: PIX },
      { code: 'await manager.query(`UPDATE ${table} SET claimed_at = NULL WHERE id = $1`, [id]);', filename: PIX },
      // Elsewhere: the owner's repository called, another module's entity read, a Map written.
      { code: 'await this.sales.markPixChargeClosedNow(id);', filename: PIX },
      { code: 'const sale = await manager.getRepository(SaleEntity).findOneBy({ id });', filename: PIX },
      { code: "const rows = await manager.createQueryBuilder().select('s.id').from(SaleEntity, 's').getMany();", filename: PIX },
      { code: 'const repo = manager.getRepository(SaleEntity); const n = await repo.count();', filename: PIX },
      { code: 'this.cache.delete(key); this.seen.clear();', filename: PIX },
    ],
    invalid: [
      // The planted write of the brief, with the whole message.
      {
        code: "await this.dataSource.query(`UPDATE sales SET status = 'PAGO' WHERE id = $1`, [saleId]);",
        filename: PIX,
        errors: [
          {
            message:
              'SQL `UPDATE sales` writes table `sales`, which only its owner src/sales/sales.repository.ts may write: call a method of that repository instead (add one there; pass the EntityManager when the write is part of a transaction).',
          },
        ],
      },
      // SQL: every verb, any case, aliases, quoted and qualified names, split over lines or a concatenation.
      salesWrite("await manager.query('update SALES s set refunded_cents = 0 where id = $1', [id]);"),
      salesWrite('await manager.query(`DELETE FROM public."sales" WHERE id = ${id}`);'),
      salesWrite('await manager.query(`MERGE INTO sales USING incoming i ON i.id = sales.id WHEN MATCHED THEN DO NOTHING`);'),
      salesWrite("await manager.query('UPDATE sales ' + 'SET refunded_cents = 0 WHERE id = $1', [id]);"),
      {
        code: 'await manager.query(`WITH moved AS (SELECT 1)\n  INSERT INTO\n    sale_items (sale_id) SELECT 1`);',
        filename: PIX,
        errors: [notOwner('sale_items', SALES_OWNER)],
      },
      {
        code: "await manager.query('TRUNCATE TABLE ONLY sales, subscriptions CASCADE');",
        filename: PIX,
        errors: [
          notOwner('sales', SALES_OWNER),
          notOwner('subscriptions', SUBSCRIPTIONS_OWNER),
        ],
      },
      { code: "await manager.query('INSERT INTO mystery_rows (a) VALUES (1)');", filename: PIX, errors: [{ message: /writes table `mystery_rows`, which has no owner in eslint-rules\/table-owners\.json/ }] },
      // The src/database helpers: a lease or a status history on another module's table, the bulk writes.
      salesWrite("const CHARGE_POLL = new Lease({ table: 'sales', column: 'automatic_pix_checked_at', duration: '1 minute' });"),
      salesWrite('await insertRows(manager, SaleEntity, rows);'),
      salesWrite('addRowUpdates(statement, this.dataSource.getMetadata(SaleEntity), updates);'),
      {
        code: 'await updateRows(manager, SubscriptionEntity, updates);',
        filename: PIX,
        errors: [notOwner('subscriptions', SUBSCRIPTIONS_OWNER)],
      },
      // TypeORM: the manager, a repository (inline, in a variable, a getter, injected), PlainRows, query builders.
      salesWrite('await manager.save(SaleEntity, { id, status });'),
      salesWrite("await manager.update(SaleEntity, { id }, { status: 'PAGO' });"),
      salesWrite('await manager.getRepository(SaleEntity).insert(sale);'),
      salesWrite('const repo = manager.getRepository(SaleEntity);\nawait repo.delete({ id });'),
      salesWrite(
        'class A {\n  async run() { await this.sales.update({ id }, changes); }\n  get sales() { return this.dataSource.getRepository(SaleEntity); }\n}',
      ),
      salesWrite('class A {\n  constructor(@InjectRepository(SaleEntity) private readonly sales: Repository<SaleEntity>) {}\n  run() { return this.sales.save(sale); }\n}'),
      salesWrite('class A {\n  private readonly rows = new PlainRows(this.dataSource.getMetadata(SaleEntity));\n  run() { return this.rows.insertStatement([sale]); }\n}'),
      salesWrite('await manager.createQueryBuilder().update(SaleEntity).set({ status }).where("id = :id", { id }).execute();'),
      salesWrite('await manager.createQueryBuilder().insert().into(SaleEntity).values(sale).execute();'),
      salesWrite('await manager.createQueryBuilder().delete().from(SaleEntity).where("id = :id", { id }).execute();'),
      salesWrite("await manager.createQueryBuilder(SaleEntity, 's').update().set({ status }).execute();"),
      salesWrite("await manager.getRepository(SaleEntity).createQueryBuilder('s').delete().execute();"),
    ],
  });
});

describe('the table-ownership map (eslint-rules/table-owners.json)', () => {
  const tables: Record<string, { owner: string; entities: string[] }> = owners.tables;

  it('names an owner for exactly the tables migrations/ create and do not drop again', () => {
    const created = new Set<string>();
    const dropped = new Set<string>();
    for (const name of readdirSync(join(root, 'migrations')).filter((entry) => entry.endsWith('.ts'))) {
      // What a migration's up() does (its down() undoes it).
      const up = readFileSync(join(root, 'migrations', name), 'utf8').split(/async down\(/)[0];
      for (const [, table] of up.matchAll(/CREATE TABLE\s+(?:IF NOT EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) created.add(table);
      for (const [, table] of up.matchAll(/DROP TABLE\s+(?:IF EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) dropped.add(table);
    }
    expect(Object.keys(tables).sort()).toEqual([...created].filter((table) => !dropped.has(table)).sort());
  });

  it('names owners that are files of src/', () => {
    const missing = Object.entries(tables).filter(([, { owner }]) => !owner.startsWith('src/') || !existsSync(join(root, owner)));
    expect(missing).toEqual([]);
  });

  it('lists every entity under the table it maps, and no other', () => {
    const entities: Array<[string, string]> = [];
    const visit = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) visit(path);
        else if (entry.name.endsWith('.entity.ts')) {
          for (const [, table, entity] of readFileSync(path, 'utf8').matchAll(/@Entity\(\{\s*name:\s*'([a-z_]+)'[^)]*\)\s*export class (\w+)/g)) entities.push([entity, table]);
        }
      }
    };
    visit(join(root, 'src'));
    const listed = Object.entries(tables).flatMap(([table, { entities: names }]) => names.map((entity): [string, string] => [entity, table]));
    expect(entities.length).toBeGreaterThan(0);
    expect(listed.sort()).toEqual(entities.sort());
  });
});
