import { EntityManager } from 'typeorm';
import { PlainRows } from './plain-rows';

/** A LIKE pattern that matches `text` anywhere, its own `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Where a page of a newest-first list starts: the n-th page of `limit` rows (an OFFSET: the spec's `page`,
 * which reads every row it skips), or below the id of the previous page's last row (a cursor: an index
 * range, whatever the depth).
 */
export type PagePosition = { page: number } | { beforeId: number | string };

/**
 * The rows of one table that a list shows, built by its owning repository: conditions over the table's
 * columns, ANDed, each value a numbered parameter (`param`), never text spliced into the SQL.
 */
export class RowFilter {
  private readonly conditions: string[] = [];
  private readonly values: unknown[] = [];

  constructor(readonly table: string) {}

  /** The placeholder of `value` in this filter's statements. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Keeps the rows where `condition` holds: SQL over the table's columns, its values taken through `param`. */
  where(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** The WHERE clause of the conditions so far. */
  get clause(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }

  /** The filter's parameters so far, for a statement over its clause. */
  get parameters(): unknown[] {
    return [...this.values];
  }

  /** A copy to narrow further (a page's cursor) without narrowing this one. */
  clone(): RowFilter {
    const copy = new RowFilter(this.table);
    copy.conditions.push(...this.conditions);
    copy.values.push(...this.values);
    return copy;
  }
}

/** The filter narrowed to the rows created in [from, before), for the bounds given. */
export function createdWithin(filter: RowFilter, range: { createdFrom?: Date; createdBefore?: Date }): RowFilter {
  if (range.createdFrom) filter.where(`created_at >= ${filter.param(range.createdFrom)}`);
  if (range.createdBefore) filter.where(`created_at < ${filter.param(range.createdBefore)}`);
  return filter;
}

/** How many rows the filter matches: count(*). */
export async function countMatching(manager: EntityManager, filter: RowFilter): Promise<number> {
  const [row]: Array<{ total: string }> = await manager.query(`SELECT count(*) AS total FROM ${filter.table} ${filter.clause}`, filter.parameters);
  return Number(row?.total ?? 0);
}

/**
 * One page of the filter's rows, newest first (by id), as entities, and whether more follow (one row
 * more is read to tell). The page's ids are picked first, from the index on (seller_id, …, id) alone (an
 * index-only range: the primary key walked backwards with a filter on the seller would read other
 * sellers' newer rows), then its rows by primary key (`= ANY` of that array: a join there let the planner
 * merge-join the whole primary key from the newest row down to a deep page). Columns marked
 * `select: false` are not read.
 */
export async function newestFirstPage<T extends object>(
  manager: EntityManager,
  entities: PlainRows<T>,
  filter: RowFilter,
  position: PagePosition,
  limit: number,
): Promise<{ rows: T[]; more: boolean }> {
  const ids = filter.clone();
  if ('beforeId' in position) ids.where(`id < ${ids.param(position.beforeId)}`);
  const offset = 'page' in position && position.page > 1 ? ` OFFSET ${ids.param((position.page - 1) * limit)}` : '';
  const pageIds = `SELECT id FROM ${filter.table} ${ids.clause} ORDER BY id DESC LIMIT ${ids.param(limit + 1)}${offset}`;
  const rows: Array<Record<string, unknown>> = await manager.query(
    `SELECT ${entities.columnList()} FROM ${filter.table} WHERE id = ANY(ARRAY(${pageIds})) ORDER BY id DESC`,
    ids.parameters,
  );
  return { rows: rows.slice(0, limit).map((row) => entities.hydrate(row)), more: rows.length > limit };
}
