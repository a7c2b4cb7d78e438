import * as pg from 'pg';

/** Statements with more parameters than this (multi-row inserts of a batch) stay unnamed: their texts vary with the batch. */
const MAX_PARAMETERS = 64;
/** Distinct texts named in all; past this, new texts run unnamed (each name is a prepared statement in every connection). */
const MAX_NAMES = 1000;

const names = new Map<string, string>();

/** The name a parameterized text is prepared under, or undefined when it stays unnamed. */
function nameFor(text: string, parameterCount: number): string | undefined {
  if (parameterCount === 0 || parameterCount > MAX_PARAMETERS) return undefined;
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMES) {
    name = `p${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/**
 * A connection that runs each parameterized statement as a named one: PostgreSQL parses and plans it
 * the first time this connection sees its text, and afterwards only binds and executes it. An unnamed
 * statement (what node-postgres sends for `query(text, values)`, and so for every TypeORM query) is
 * parsed and planned on every call: in issue 24's profile, a sale lookup cost PostgreSQL three times the
 * CPU it costs prepared. Statements without parameters (BEGIN, COMMIT, SET …) keep the simple protocol.
 * A migration that changes a table's columns while the process runs makes each connection's statement
 * returning that table's rows fail once ("cached plan must not change result type"); PostgreSQL then
 * plans it again with the new columns (test/e2e/prepared-statements.e2e-spec.ts).
 */
class PreparingClient extends pg.Client {
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = nameFor(config, values.length);
      if (name !== undefined) return (super.query as (...args: unknown[]) => never)({ name, text: config, values }, callback);
    }
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }
}

class PreparingPool extends pg.Pool {
  constructor(options?: pg.PoolConfig) {
    super({ ...options, Client: PreparingClient });
  }
}

/** node-postgres as TypeORM's `driver`, with pools of PreparingClient connections. */
export const preparingPg = Object.create(pg, { Pool: { value: PreparingPool, enumerable: true } }) as typeof pg;
