import { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { CteStatement } from './cte-statement';
import { quote, transformed } from './plain-rows';

/**
 * Multi-row writes for batch jobs: every row travels in one jsonb parameter read back with
 * jsonb_to_recordset, so a batch of any size is one statement and one round trip, with no limit on
 * the number of bind parameters. Columns are named by the entity's properties and mapped through its
 * TypeORM metadata (column names, types, transformers), as the repositories' single-row writes are.
 */

/** Record types of jsonb_to_recordset for the column types the entities use (char and varchar read as text, never truncated). */
const RECORD_TYPES: Record<string, string> = {
  varchar: 'text',
  char: 'text',
  text: 'text',
  bigint: 'bigint',
  integer: 'integer',
  int: 'integer',
  smallint: 'integer',
  timestamptz: 'timestamptz',
  jsonb: 'jsonb',
  boolean: 'boolean',
  uuid: 'uuid',
};

function columnOf(metadata: EntityMetadata, property: string): ColumnMetadata {
  const column = metadata.findColumnWithPropertyName(property);
  if (!column) throw new Error(`${metadata.name} has no column for property ${property}`);
  return column;
}

function recordType(column: ColumnMetadata): string {
  const type = typeof column.type === 'string' ? RECORD_TYPES[column.type] : column.type === Number ? 'integer' : undefined;
  if (!type) throw new Error(`No record type for column ${column.databaseName} (${String(column.type)})`);
  return type;
}

function databaseValue(column: ColumnMetadata, value: unknown): unknown {
  const stored = transformed(column.transformer, 'to', value);
  return stored === undefined ? null : stored;
}

/** The rows as one jsonb array keyed by column name, and the record definition that reads it back. */
function recordset(metadata: EntityMetadata, properties: string[], rows: Array<Record<string, unknown>>, extra: Array<[string, string]> = []) {
  const columns = properties.map((property) => columnOf(metadata, property));
  const definition = [...columns.map((column) => `${quote(column.databaseName)} ${recordType(column)}`), ...extra.map(([name, type]) => `${quote(name)} ${type}`)].join(', ');
  const json = rows.map((row) => {
    const record: Record<string, unknown> = {};
    columns.forEach((column, index) => {
      record[column.databaseName] = databaseValue(column, row[properties[index]]);
    });
    for (const [name] of extra) record[name] = row[name] ?? null;
    return record;
  });
  return { columns, definition, json: JSON.stringify(json) };
}

/**
 * Inserts the rows (every row with the same properties, or it throws) in one statement; with `ignoreConflicts`, a row
 * that would break a unique constraint is skipped (ON CONFLICT DO NOTHING). `computed` sets columns the
 * entity does not map to an SQL expression of the code's own over the row's columns (`v."status"`).
 * Answers the `returning` properties of the rows written, or with `'*'` their whole rows as the driver
 * reads them (for PlainRows.hydrate), in no particular order.
 */
export async function insertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  rows: Array<Partial<T>>,
  options: { ignoreConflicts?: boolean; returning?: Array<keyof T & string> | '*'; computed?: Record<string, string> } = {},
): Promise<Array<Record<string, unknown>>> {
  if (rows.length === 0) return [];
  const metadata = manager.connection.getMetadata(target);
  const properties = Object.keys(rows[0]);
  // The statement's columns are the first row's: a property another row has and it lacks would be dropped.
  const odd = rows.find((row) => Object.keys(row).length !== properties.length || properties.some((property) => !(property in row)));
  if (odd) throw new Error(`insertRows into ${metadata.tableName}: every row must have the same properties (${properties.join(', ')}; one has ${Object.keys(odd).join(', ')})`);
  const { columns, definition, json } = recordset(metadata, properties, rows as Array<Record<string, unknown>>);
  const computed = Object.entries(options.computed ?? {});
  const names = columns.map((column) => quote(column.databaseName));
  const values = [...names.map((name) => `v.${name}`), ...computed.map(([, expression]) => expression)];
  const returning =
    options.returning === '*' ? ['*'] : (options.returning ?? []).map((property) => `${quote(columnOf(metadata, property).databaseName)} AS ${quote(property)}`);
  const result: Array<Record<string, unknown>> = await manager.query(
    `INSERT INTO ${quote(metadata.tableName)} (${[...names, ...computed.map(([column]) => quote(column))].join(', ')})
     SELECT ${values.join(', ')} FROM jsonb_to_recordset($1::jsonb) AS v(${definition})
     ${options.ignoreConflicts ? 'ON CONFLICT DO NOTHING' : ''}
     ${returning.length > 0 ? `RETURNING ${returning.join(', ')}` : ''}`,
    [json],
  );
  return returning.length > 0 ? result : [];
}

/** One row's new values by property, and the status it must still have (the conditional update of style.md) when `expectedStatus` is given. */
export interface RowUpdate<T> {
  id: number;
  changes: Partial<T>;
  expectedStatus?: string;
  /** Text columns of its status history line besides the statuses (`history.columns`), null where missing. */
  line?: Record<string, string | null>;
}

/** A status history table: its foreign key column, and the text columns its lines take from each update's `line`. */
export interface StatusHistory {
  table: string;
  key: string;
  columns?: string[];
}

/** The updates by set of changed properties (and whether guarded): one UPDATE each. */
function groupsOf<T>(updates: Array<RowUpdate<T>>): Array<Array<RowUpdate<T>>> {
  const groups = new Map<string, Array<RowUpdate<T>>>();
  for (const update of updates) {
    const key = `${Object.keys(update.changes as object).sort().join(',')}|${update.expectedStatus !== undefined}`;
    const group = groups.get(key);
    if (group) group.push(update);
    else groups.set(key, [update]);
  }
  return [...groups.values()];
}

/**
 * Updates each row by id with its own values, added to `statement`: one UPDATE per set of changed
 * properties (a batch usually has one or two), the entity's updated_at set to now() as TypeORM's update
 * does. A row with an `expectedStatus` is written only if its status is still that one; with `history`
 * (a status history table and its foreign key column), each row written gets its line (previous_status,
 * status and the `line` columns) in the same statement. Each row is written only while `gate` holds.
 * Answers the names of the CTEs holding the ids written. The rows must be distinct: a row is written at
 * most once in a statement.
 */
export function addRowUpdates<T extends ObjectLiteral>(
  statement: CteStatement,
  metadata: EntityMetadata,
  updates: Array<RowUpdate<T>>,
  options: { history?: StatusHistory; gate?: string } = {},
): string[] {
  const { history, gate } = options;
  const updateDate = metadata.updateDateColumn?.databaseName;
  return groupsOf(updates).map((group) => {
    const properties = Object.keys(group[0].changes).sort();
    const guarded = group[0].expectedStatus !== undefined;
    const lineColumns = history && guarded ? (history.columns ?? []) : [];
    const extra: Array<[string, string]> = [
      ['__id', 'integer'],
      ...(guarded ? ([['__expected', 'text']] as Array<[string, string]>) : []),
      ...lineColumns.map((column): [string, string] => [`__line_${column}`, 'text']),
    ];
    const { columns, definition, json } = recordset(
      metadata,
      properties,
      group.map((update) => ({
        ...update.changes,
        __id: update.id,
        __expected: update.expectedStatus,
        ...Object.fromEntries(lineColumns.map((column) => [`__line_${column}`, update.line?.[column] ?? null])),
      })),
      extra,
    );
    const sets = columns.map((column) => `${quote(column.databaseName)} = v.${quote(column.databaseName)}`);
    if (updateDate && !columns.some((column) => column.databaseName === updateDate)) sets.push(`${quote(updateDate)} = now()`);
    // The ids again as an array: the planner reads the rows by their primary key, where a join with the
    // recordset alone (estimated at 100 rows) may scan the whole table.
    const moved = statement.with(
      statement.name('moved'),
      `UPDATE ${quote(metadata.tableName)} AS t SET ${sets.join(', ')}
         FROM jsonb_to_recordset(${statement.param(json)}::jsonb) AS v(${definition})
        WHERE t.id = v."__id" AND t.id = ANY(${statement.param(group.map((update) => update.id))}::int[])${guarded ? ' AND t.status = v."__expected"' : ''}${gate ? ` AND (${gate})` : ''}
        RETURNING t.id${guarded ? ', v."__expected" AS previous, t.status' : ''}${lineColumns.map((column) => `, v.${quote(`__line_${column}`)}`).join('')}`,
    );
    if (history && guarded) {
      const lineNames = lineColumns.map((column) => quote(column));
      statement.with(
        statement.name('history'),
        `INSERT INTO ${quote(history.table)} (${[quote(history.key), 'previous_status', 'status', ...lineNames].join(', ')})
         SELECT ${['id', 'previous', 'status', ...lineColumns.map((column) => quote(`__line_${column}`))].join(', ')} FROM ${moved} ORDER BY id`,
      );
    }
    return moved;
  });
}

/**
 * Updates each row by id with its own values, in one statement of its own (addRowUpdates without a
 * gate): for a write that is the whole unit, a batch of one when it is one row. A property left
 * undefined is not written (as TypeORM's update leaves it). Answers the ids written.
 */
export async function updateRows<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, updates: Array<RowUpdate<T>>): Promise<number[]> {
  if (updates.length === 0) return [];
  const statement = new CteStatement();
  const written = addRowUpdates(
    statement,
    manager.connection.getMetadata(target),
    updates.map((update) => ({ ...update, changes: Object.fromEntries(Object.entries(update.changes).filter(([, value]) => value !== undefined)) as Partial<T> })),
  );
  const rows = await statement.run<{ id: number }>(manager, written.map((name) => `SELECT id FROM ${name}`).join(' UNION ALL '));
  return rows.map((row) => row.id);
}
