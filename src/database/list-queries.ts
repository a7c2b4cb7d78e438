import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

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

/** The query narrowed to the rows created in [from, before), for the bounds given. */
export function createdWithin<T extends ObjectLiteral>(query: SelectQueryBuilder<T>, range: { createdFrom?: Date; createdBefore?: Date }): SelectQueryBuilder<T> {
  if (range.createdFrom) query.andWhere(`${query.alias}.created_at >= :from`, { from: range.createdFrom });
  if (range.createdBefore) query.andWhere(`${query.alias}.created_at < :before`, { before: range.createdBefore });
  return query;
}

/** How many rows the query matches: count(*) (TypeORM's getCount counts DISTINCT ids, sorting every match). */
export async function countMatching<T extends ObjectLiteral>(query: SelectQueryBuilder<T>): Promise<number> {
  const row = await query.clone().select('COUNT(*)', 'total').orderBy().getRawOne<{ total: string }>();
  return Number(row?.total ?? 0);
}

/**
 * One page of the query's rows, newest first (by id), and whether more follow (one row more is read to
 * tell). The page's ids are picked first, from the index on (seller_id, …, id) alone (an index-only range:
 * the primary key walked backwards with a filter on the seller would read other sellers' newer rows), then
 * its rows by primary key (`= ANY` of that array: a join there let the planner merge-join the whole
 * primary key from the newest row down to a deep page).
 */
export async function newestFirstPage<T extends ObjectLiteral>(query: SelectQueryBuilder<T>, position: PagePosition, limit: number): Promise<{ rows: T[]; more: boolean }> {
  const alias = query.alias;
  const ids = query.clone().select(`${alias}.id`, 'id').orderBy(`${alias}.id`, 'DESC').limit(limit + 1);
  if ('beforeId' in position) ids.andWhere(`${alias}.id < :beforeId`, { beforeId: position.beforeId });
  else if (position.page > 1) ids.offset((position.page - 1) * limit);
  const rows = await query.connection
    .createQueryBuilder<T>(query.expressionMap.mainAlias!.target, 'row')
    .where(`row.id = ANY(ARRAY(${ids.getQuery()}))`)
    .setParameters(ids.getParameters())
    .orderBy('row.id', 'DESC')
    .getMany();
  return { rows: rows.slice(0, limit), more: rows.length > limit };
}
