import { Pool } from 'pg';
import { DataSource, EntityMetadata, ValueTransformer } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { CteStatement } from './cte-statement';

type Row = Record<string, unknown>;

/** The pg pool behind a data source: the postgres driver's public `master` (the pool TypeORM itself queries through). */
export function pgPool(dataSource: DataSource): Pool {
  const driver = dataSource.driver;
  if (!(driver instanceof PostgresDriver)) throw new Error(`The data source's driver is ${driver.constructor.name}, not PostgreSQL's`);
  return driver.master as Pool;
}

/**
 * One statement straight through the pool, outside any transaction: TypeORM makes a query runner for
 * each `query` (and releases it), which on a read of a row or two costs more CPU than the row itself.
 * For hot reads only; inside a transaction, its manager is used.
 */
export async function poolQuery<R>(dataSource: DataSource, sql: string, parameters: unknown[]): Promise<R[]> {
  return (await pgPool(dataSource).query(sql, parameters)).rows as R[];
}

/** A value through the column's transformers (TypeORM's order: `to` first to last, `from` last to first). */
export function transformed(transformer: ValueTransformer | ValueTransformer[] | undefined, direction: 'to' | 'from', value: unknown): unknown {
  if (!transformer) return value;
  const chain = Array.isArray(transformer) ? transformer : [transformer];
  return (direction === 'to' ? chain : [...chain].reverse()).reduce((current, step) => step[direction](current), value);
}

/** A quoted SQL identifier. */
export const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * An entity's rows written and read with plain SQL, converted through TypeORM's own column metadata
 * (column names, transformers, JSON columns), without its query builder: the one way the repositories
 * map rows to entities (docs/architecture.md, "Data access"). Building each statement through TypeORM
 * cost more CPU than the round trip itself on the hot paths (issue 11's profile).
 *
 * Only the types the entities here use are converted: what node-postgres returns for integer, boolean,
 * text and timestamptz columns is what TypeORM would hand over; bigint goes through the entity's
 * transformer; json/jsonb values are serialized on the way in.
 */
export class PlainRows<T extends object> {
  private readonly table: string;
  private readonly columns: ColumnMetadata[];

  constructor(private readonly metadata: EntityMetadata) {
    this.table = quote(metadata.tableName);
    this.columns = metadata.columns;
  }

  /**
   * The entity's columns as a select list (`"id", "seller_id", …`), those marked `select: false` only
   * `withHidden`: what TypeORM's find reads, for a row that hydrate then maps.
   */
  columnList(withHidden = false): string {
    return this.columns
      .filter((column) => column.isSelect !== false || withHidden)
      .map((column) => quote(column.databaseName))
      .join(', ');
  }

  /** The entity of a row read with `SELECT *` or `RETURNING *`; columns marked `select: false` are left out unless `withHidden`. */
  hydrate(row: Row, withHidden = false): T {
    const entity = this.metadata.create() as T;
    for (const column of this.columns) {
      if (!(column.databaseName in row) || (column.isSelect === false && !withHidden)) continue;
      const value = row[column.databaseName];
      column.setEntityValue(entity, value === null ? null : transformed(column.transformer, 'from', value));
    }
    return entity;
  }

  /**
   * The INSERT of these rows (a property missing from a row takes its default) and its parameters,
   * numbered from `$<offset + 1>` so that it can be one part of a larger statement.
   */
  insertStatement(rows: Array<Partial<T>>, offset = 0): [string, unknown[]] {
    const used = this.columns.filter((column) => rows.some((row) => column.getEntityValue(row) !== undefined));
    const parameters: unknown[] = [];
    const tuples = rows.map((row) => {
      const cells = used.map((column) => {
        const value = column.getEntityValue(row);
        if (value === undefined) return 'DEFAULT';
        parameters.push(this.persisted(column, value));
        return `$${offset + parameters.length}`;
      });
      return `(${cells.join(', ')})`;
    });
    return [`INSERT INTO ${this.table} (${used.map((column) => quote(column.databaseName)).join(', ')}) VALUES ${tuples.join(', ')}`, parameters];
  }

  /**
   * The INSERT of one row into `statement`, written only when `condition` holds (`INSERT … SELECT …
   * WHERE`), each value a parameter cast to its column's type. Answers the INSERT, for a CTE.
   */
  insertWhere(statement: CteStatement, row: Partial<T>, condition: string): string {
    const used = this.columns.filter((column) => column.getEntityValue(row) !== undefined);
    const sqlType = (column: ColumnMetadata) => this.metadata.connection.driver.normalizeType(column);
    const values = used.map((column) => `${statement.param(this.persisted(column, column.getEntityValue(row)))}::${sqlType(column)}`);
    return `INSERT INTO ${this.table} (${used.map((column) => quote(column.databaseName)).join(', ')}) SELECT ${values.join(', ')} WHERE ${condition}`;
  }

  private persisted(column: ColumnMetadata, value: unknown): unknown {
    if (typeof value === 'function') throw new Error(`PlainRows: ${column.propertyName} must be a value, not raw SQL`);
    const stored = transformed(column.transformer, 'to', value);
    if (stored === null || stored === undefined) return null;
    return column.type === 'jsonb' || column.type === 'json' ? JSON.stringify(stored) : stored;
  }
}
