'use strict';
/**
 * Local ESLint plugin: a table is written only by its owning module's repository.
 *
 * The owner of each table is in table-owners.json beside this file. Outside that file the rule reports:
 * - SQL in a string or template literal (or a static `+` concatenation of them) that writes a table:
 *   `INSERT INTO t`, `UPDATE t … SET`, `DELETE FROM t`, `TRUNCATE [TABLE] t[, u]`, `MERGE INTO t`,
 *   any case, `ONLY`, quoted and schema-qualified names included. A write to a table the map does not
 *   know is reported too, so that a new table gets its owner;
 * - TypeORM writes through an entity mapped on the table: `manager.save|insert|update|upsert|delete|…(E, …)`,
 *   `getRepository(E).save|insert|update|…`, a repository or PlainRows held in a variable, property, getter
 *   or `@InjectRepository(E)` parameter and then written through, query builders
 *   (`.update(E)`, `.insert().into(E)`, `.delete().from(E)`, `createQueryBuilder(E).update()|delete()|insert()`);
 * - the write helpers of src/database: `insertRows(m, E, …)`, `updateRows(m, E, …)`,
 *   `addRowUpdates(s, getMetadata(E), …)`, and an object literal `{ table: 't' }` (a Lease on the
 *   table, a status-history table).
 *
 * Plain CommonJS so that eslint.config.mjs imports it and jest's unit project requires it as it is.
 */
const path = require('node:path');
const defaultMap = require('./table-owners.json');

const MAP_FILE = 'eslint-rules/table-owners.json';

/** Methods of a TypeORM Repository or EntityManager that write. */
const REPOSITORY_WRITES = new Set([
  'save',
  'insert',
  'update',
  'upsert',
  'delete',
  'remove',
  'softDelete',
  'softRemove',
  'restore',
  'recover',
  'increment',
  'decrement',
  'clear',
]);
/** Methods of a PlainRows (src/database/plain-rows.ts) that build a write. */
const PLAIN_ROWS_WRITES = new Set(['insertStatement', 'insertWhere']);
/** Query-builder steps that make the builder write. */
const BUILDER_WRITES = new Set(['update', 'insert', 'delete', 'softDelete', 'restore']);
/** The multi-row write helpers of src/database/bulk-rows.ts: the argument naming the entity. */
const ROW_HELPERS = { insertRows: 1, updateRows: 1, addRowUpdates: 1 };

// SQL. An expression inside a template literal reads as this character: it is never a table name.
const HOLE = '\u0000';
const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*(?![A-Za-z0-9_$]))`;
const NAME = String.raw`${IDENT}(?:\s*\.\s*${IDENT})?`;
const WRITE = new RegExp(
  [
    // INSERT INTO t, DELETE FROM t, MERGE INTO t
    String.raw`\b(?<verb1>INSERT\s+INTO|DELETE\s+FROM|MERGE\s+INTO)\s+(?:ONLY\s+)?(?<table1>${NAME})`,
    // UPDATE t [[AS] alias] SET … (not FOR UPDATE, FOR NO KEY UPDATE, DO UPDATE), or UPDATE t closing the literal
    String.raw`(?<!\b(?:FOR|KEY|DO)\s+)\b(?<verb2>UPDATE)\s+(?:ONLY\s+)?(?<table2>${NAME})(?=\s*\*?\s*(?:$|SET\b|(?:AS\s+)?${IDENT}\s+SET\b))`,
    // TRUNCATE [TABLE] t[, u …]
    String.raw`\b(?<verb3>TRUNCATE)(?:\s+TABLE)?\s+(?<tables3>(?:ONLY\s+)?${NAME}\s*\*?(?:\s*,\s*(?:ONLY\s+)?${NAME}\s*\*?)*)`,
  ].join('|'),
  'gi',
);
const NAMES_IN_LIST = new RegExp(`(?:ONLY\\s+)?(${NAME})`, 'gi');

/** The table of a (possibly quoted, schema-qualified) name as PostgreSQL reads it. */
function tableName(name) {
  const parts = name.match(new RegExp(IDENT, 'g'));
  const last = parts[parts.length - 1];
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last.toLowerCase();
}

/** Every table an SQL text writes, with its verb. */
function sqlWrites(text) {
  const writes = [];
  for (const match of text.matchAll(WRITE)) {
    const { verb1, table1, verb2, table2, verb3, tables3 } = match.groups;
    if (verb1) writes.push({ verb: verb1.replace(/\s+/g, ' ').toUpperCase(), table: tableName(table1) });
    else if (verb2) writes.push({ verb: 'UPDATE', table: tableName(table2) });
    else if (verb3) for (const [, name] of tables3.matchAll(NAMES_IN_LIST)) writes.push({ verb: 'TRUNCATE', table: tableName(name) });
  }
  return writes;
}

/** The text of a literal, a template (its expressions as HOLE) or a `+` chain of them; null for anything else. */
function staticText(node) {
  if (node.type === 'Literal') return typeof node.value === 'string' ? node.value : null;
  if (node.type === 'TemplateLiteral') return node.quasis.map((quasi) => quasi.value.cooked ?? quasi.value.raw).join(HOLE);
  if (node.type === 'BinaryExpression' && node.operator === '+') {
    const left = staticText(node.left);
    const right = staticText(node.right);
    if (left === null && right === null) return null;
    return `${left ?? HOLE}${right ?? HOLE}`;
  }
  return null;
}

const isConcat = (node) => node && node.type === 'BinaryExpression' && node.operator === '+';

/** The name of a member's property (`a.b`, `a['b']`), or null. */
function propertyName(member) {
  if (member.type !== 'MemberExpression') return null;
  if (!member.computed && member.property.type === 'Identifier') return member.property.name;
  if (member.computed && member.property.type === 'Literal' && typeof member.property.value === 'string') return member.property.value;
  return null;
}

/** The name a call is made through: `f(…)` → f, `a.b.f(…)` → f. */
function calleeName(call) {
  if (call.type !== 'CallExpression' && call.type !== 'NewExpression') return null;
  if (call.callee.type === 'Identifier') return call.callee.name;
  return propertyName(call.callee);
}

/** Strips `await`, `as`, `!` and parentheses around an expression. */
function unwrap(node) {
  let current = node;
  while (current && ['AwaitExpression', 'TSAsExpression', 'TSNonNullExpression', 'TSSatisfiesExpression', 'TSTypeAssertion'].includes(current.type)) {
    current = current.type === 'AwaitExpression' ? current.argument : current.expression;
  }
  return current;
}

/** The name under which a member or identifier holds something: `x` → x, `this.x` → this.x. */
function holderKey(node) {
  const target = unwrap(node);
  if (!target) return null;
  if (target.type === 'Identifier') return target.name;
  if (target.type === 'MemberExpression' && target.object.type === 'ThisExpression') {
    const name = propertyName(target) ?? (target.property.type === 'PrivateIdentifier' ? `#${target.property.name}` : null);
    return name === null ? null : `this.${name}`;
  }
  return null;
}

module.exports = {
  meta: { name: 'table-ownership' },
  rules: {
    'writes-through-owner': {
      meta: {
        type: 'problem',
        docs: { description: 'A table is written only by its owning module’s repository (eslint-rules/table-owners.json).' },
        schema: [
          {
            type: 'object',
            properties: { tables: { type: 'object' } },
            additionalProperties: false,
          },
        ],
        messages: {
          notOwner:
            '{{how}} writes table `{{table}}`, which only its owner {{owner}} may write: call a method of that repository instead (add one there; pass the EntityManager when the write is part of a transaction).',
          unknownTable: '{{how}} writes table `{{table}}`, which has no owner in ' + MAP_FILE + ': name its owning repository there.',
        },
      },
      create(context) {
        const tables = (context.options[0] && context.options[0].tables) || defaultMap.tables;
        const tableOfEntity = new Map();
        for (const [table, { entities }] of Object.entries(tables)) for (const entity of entities || []) tableOfEntity.set(entity, table);

        const relative = path.relative(context.cwd, context.physicalFilename || context.filename).split(path.sep).join('/');
        const owns = (table) => tables[table] && tables[table].owner === relative;

        function check(node, table, how) {
          if (!tables[table]) context.report({ node, messageId: 'unknownTable', data: { table, how } });
          else if (!owns(table)) context.report({ node, messageId: 'notOwner', data: { table, owner: tables[table].owner, how } });
        }

        /** The table of an entity named by an expression (`SaleEntity`), or null. */
        function entityTable(node) {
          const target = unwrap(node);
          return target && target.type === 'Identifier' && tableOfEntity.has(target.name) ? tableOfEntity.get(target.name) : null;
        }

        /** The table of an entity an expression mentions anywhere (`this.dataSource.getMetadata(SaleEntity)`), or null. */
        function mentionedTable(node) {
          let found = null;
          (function visit(current) {
            if (found || !current || typeof current.type !== 'string') return;
            if (current.type === 'Identifier' && tableOfEntity.has(current.name)) {
              found = tableOfEntity.get(current.name);
              return;
            }
            for (const key of Object.keys(current)) {
              if (key === 'parent') continue;
              const child = current[key];
              if (Array.isArray(child)) child.forEach(visit);
              else if (child && typeof child.type === 'string') visit(child);
            }
          })(node);
          return found;
        }

        /** What an expression makes, when it makes a handle on an entity's table: a repository or a PlainRows. */
        function handleOf(node) {
          const target = unwrap(node);
          if (!target) return null;
          if (target.type === 'CallExpression' && ['getRepository', 'getTreeRepository'].includes(calleeName(target))) {
            const table = entityTable(target.arguments[0]);
            return table ? { kind: 'repository', table } : null;
          }
          if (target.type === 'NewExpression' && calleeName(target) === 'PlainRows') {
            const table = mentionedTable(target.arguments[0]);
            return table ? { kind: 'plainRows', table } : null;
          }
          return null;
        }

        // Handles bound to names in this file, and the calls through names, resolved once the file is read
        // (a getter may be declared after the method that uses it).
        const handles = new Map();
        const callsThroughNames = [];

        function bind(keyNode, valueNode) {
          const key = holderKey(keyNode);
          const handle = handleOf(valueNode);
          if (key && handle) handles.set(key, handle);
        }

        /**
         * The table a query-builder or repository chain is rooted on, walking down from `node` (the object
         * a method is called on): `getRepository(E)`, `createQueryBuilder(E, …)`, or a bound handle.
         */
        function chainRoot(node) {
          let current = unwrap(node);
          while (current) {
            if (current.type === 'CallExpression') {
              const name = calleeName(current);
              if (name === 'getRepository' || name === 'getTreeRepository') return { table: entityTable(current.arguments[0]), key: null };
              if (name === 'createQueryBuilder' && entityTable(current.arguments[0])) return { table: entityTable(current.arguments[0]), key: null };
              current = current.callee.type === 'MemberExpression' ? unwrap(current.callee.object) : null;
            } else if (current.type === 'MemberExpression') {
              const key = holderKey(current);
              if (key) return { table: null, key };
              current = unwrap(current.object);
            } else if (current.type === 'Identifier') {
              return { table: null, key: current.name };
            } else return null;
          }
          return null;
        }

        /** Whether a call chain below `node` has a step named in `names` (`.delete()` before `.from(E)`). */
        function chainHas(node, names) {
          let current = unwrap(node);
          while (current && (current.type === 'CallExpression' || current.type === 'MemberExpression')) {
            if (current.type === 'CallExpression') {
              if (names.has(calleeName(current))) return true;
              current = current.callee.type === 'MemberExpression' ? unwrap(current.callee.object) : null;
            } else current = unwrap(current.object);
          }
          return false;
        }

        function checkLiteral(node) {
          const text = staticText(node);
          if (text === null) return;
          const seen = new Set();
          for (const { verb, table } of sqlWrites(text)) {
            if (seen.has(table)) continue;
            seen.add(table);
            check(node, table, `SQL \`${verb} ${table}\``);
          }
        }

        return {
          Literal(node) {
            if (typeof node.value === 'string' && !isConcat(node.parent)) checkLiteral(node);
          },
          TemplateLiteral(node) {
            if (!isConcat(node.parent)) checkLiteral(node);
          },
          BinaryExpression(node) {
            if (node.operator === '+' && !isConcat(node.parent)) checkLiteral(node);
          },

          // { table: 'sales', … }: a Lease on the table, or the status-history table of updateRows/addRowUpdates.
          Property(node) {
            const key = node.key.type === 'Identifier' ? node.key.name : node.key.type === 'Literal' ? node.key.value : null;
            if (key !== 'table' || node.value.type !== 'Literal' || typeof node.value.value !== 'string') return;
            const table = tableName(node.value.value);
            if (tables[table] && !owns(table)) check(node.value, table, `\`table: '${node.value.value}'\` (a lease or status history)`);
          },

          VariableDeclarator(node) {
            bind(node.id, node.init);
          },
          AssignmentExpression(node) {
            bind(node.left, node.right);
          },
          PropertyDefinition(node) {
            if (node.key.type === 'Identifier' || node.key.type === 'PrivateIdentifier') {
              const name = node.key.type === 'PrivateIdentifier' ? `#${node.key.name}` : node.key.name;
              const handle = handleOf(node.value);
              if (handle) handles.set(`this.${name}`, handle);
            }
          },
          MethodDefinition(node) {
            // get repo() { return this.dataSource.getRepository(E); }
            if (node.kind !== 'get' || node.key.type !== 'Identifier' || !node.value.body) return;
            const body = node.value.body.body;
            if (body.length === 1 && body[0].type === 'ReturnStatement') {
              const handle = handleOf(body[0].argument);
              if (handle) handles.set(`this.${node.key.name}`, handle);
            }
          },
          TSParameterProperty(node) {
            // constructor(@InjectRepository(E) private readonly repo: Repository<E>)
            const parameter = node.parameter;
            const name = parameter.type === 'Identifier' ? parameter.name : null;
            for (const decorator of node.decorators || parameter.decorators || []) {
              const expression = decorator.expression;
              if (name && expression.type === 'CallExpression' && calleeName(expression) === 'InjectRepository') {
                const table = entityTable(expression.arguments[0]);
                if (table) handles.set(`this.${name}`, { kind: 'repository', table });
              }
            }
          },

          CallExpression(node) {
            const name = calleeName(node);
            if (!name) return;

            // insertRows(manager, E, …), updateRows(manager, E, …), addRowUpdates(statement, getMetadata(E), …)
            if (node.callee.type === 'Identifier' && Object.prototype.hasOwnProperty.call(ROW_HELPERS, name)) {
              const table = mentionedTable(node.arguments[ROW_HELPERS[name]]);
              if (table) check(node, table, `\`${name}\``);
              return;
            }
            if (node.callee.type !== 'MemberExpression') return;
            const object = node.callee.object;

            // manager.save(E, …), manager.update(E, …), queryBuilder.update(E), … .insert().into(E)
            if ((REPOSITORY_WRITES.has(name) || name === 'into') && entityTable(node.arguments[0])) {
              check(node, entityTable(node.arguments[0]), `\`.${name}(${unwrap(node.arguments[0]).name})\``);
              return;
            }
            // … .delete().from(E)
            if (name === 'from' && entityTable(node.arguments[0]) && chainHas(object, BUILDER_WRITES)) {
              check(node, entityTable(node.arguments[0]), `\`.from(${unwrap(node.arguments[0]).name})\` after a delete`);
              return;
            }
            // getRepository(E).insert(…), repo.update(…), createQueryBuilder(E).update(), plainRows.insertStatement(…)
            if (REPOSITORY_WRITES.has(name) || BUILDER_WRITES.has(name) || PLAIN_ROWS_WRITES.has(name)) {
              const root = chainRoot(object);
              if (!root) return;
              if (root.table) {
                if (REPOSITORY_WRITES.has(name) || BUILDER_WRITES.has(name)) check(node, root.table, `\`.${name}\` on the repository or query builder of its entity`);
              } else if (root.key) callsThroughNames.push({ node, key: root.key, name });
            }
          },

          'Program:exit'() {
            for (const { node, key, name } of callsThroughNames) {
              const handle = handles.get(key);
              if (!handle) continue;
              const writes = handle.kind === 'plainRows' ? PLAIN_ROWS_WRITES.has(name) : REPOSITORY_WRITES.has(name) || BUILDER_WRITES.has(name);
              if (writes) check(node, handle.table, `\`${key}.${name}\` (${handle.kind === 'plainRows' ? 'PlainRows' : 'repository'} of its entity)`);
            }
          },
        };
      },
    },
  },
};
