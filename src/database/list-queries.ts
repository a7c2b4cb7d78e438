import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** A LIKE pattern that matches `text` anywhere, its own `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The rows created in [from, before) when the bounds are given, one page of them newest first, and the total. */
export async function createdRangePage<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  range: { createdFrom?: Date; createdBefore?: Date },
  page: number,
  limit: number,
): Promise<{ rows: T[]; total: number }> {
  const alias = query.alias;
  if (range.createdFrom) query.andWhere(`${alias}.created_at >= :from`, { from: range.createdFrom });
  if (range.createdBefore) query.andWhere(`${alias}.created_at < :before`, { before: range.createdBefore });
  const [rows, total] = await query
    .orderBy(`${alias}.id`, 'DESC')
    .skip((page - 1) * limit)
    .take(limit)
    .getManyAndCount();
  return { rows, total };
}
