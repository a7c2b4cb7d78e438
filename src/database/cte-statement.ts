import { EntityManager } from 'typeorm';

/**
 * One SQL statement assembled from the writes of several repositories, each added as common table
 * expressions (data-modifying CTEs run once each, all in the statement's one snapshot, atomic as the
 * statement is): a unit of work whose writes are one statement needs no BEGIN and COMMIT round trips,
 * and holds its row locks for that statement only. A writer takes its parameters through `param` (the
 * placeholders are numbered for the whole statement) and its CTE names through `name` (unique in it);
 * a later writer reads an earlier one's CTEs by the names it answered, as the condition of its own
 * writes (`gate`: a boolean SQL expression).
 */
export class CteStatement {
  private readonly ctes: string[] = [];
  private readonly parameters: unknown[] = [];
  private names = 0;

  /** The placeholder of `value` in this statement. */
  param(value: unknown): string {
    this.parameters.push(value);
    return `$${this.parameters.length}`;
  }

  /** A CTE name not used yet in this statement. */
  name(base: string): string {
    this.names += 1;
    return `${base}_${this.names}`;
  }

  /** Adds `name AS (sql)`. */
  with(name: string, sql: string): string {
    this.ctes.push(`${name} AS (${sql})`);
    return name;
  }

  /** Runs the statement ending with `final` (a SELECT over the CTEs) and answers its rows. */
  async run<T>(manager: EntityManager, final: string): Promise<T[]> {
    return (await manager.query(`WITH ${this.ctes.join(',\n')}\n${final}`, this.parameters)) as T[];
  }
}
