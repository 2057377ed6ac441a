// A parsed `q` → a boolean SQL expression over `units` for either database:
//   db.selectFrom('units').where(compileQuery(parseQuery(q), dialect))
// Substring searches are case-insensitive (PostgreSQL ILIKE; on SQLite LIKE, which folds ASCII
// only, or a case-insensitive REGEXP when the needle has other letters), `%`, `_` and `\` are taken
// literally. Regular expressions use PostgreSQL's `~` and, on SQLite, the REGEXP function that
// db/regexp.ts registers (RE2, linear time); a query with one runs under a time limit (usesRegex).
// Numeric comparisons are plain column comparisons, so `state` filters can use the (state, id) index.

import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { QueryNode, TextColumn, CompareOp } from './parser.ts';

export type SearchDialect = 'sqlite' | 'postgres';

const OPS: Record<CompareOp, string> = { eq: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' };

const col = (name: string) => sql.ref(`units.${name}`);

/** A LIKE pattern matching `text` literally, with `\` as the escape character. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => '\\' + c);
}

function regexEscape(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, (c) => '\\' + c);
}

function substring(dialect: SearchDialect, column: TextColumn, needle: string): RawBuilder<SqlBool> {
  const pattern = '%' + likeEscape(needle) + '%';
  if (dialect === 'postgres') return sql<SqlBool>`${col(column)} ilike ${pattern} escape '\\'`;
  // SQLite's LIKE folds ASCII letters only: other letters go through the case-insensitive REGEXP
  if (/^[\x00-\x7f]*$/.test(needle)) return sql<SqlBool>`${col(column)} like ${pattern} escape '\\'`;
  return sql<SqlBool>`${col(column)} regexp ${'(?i)' + regexEscape(needle)}`;
}

function regex(dialect: SearchDialect, target: RawBuilder<unknown> | ReturnType<typeof sql.ref>, pattern: string): RawBuilder<SqlBool> {
  return dialect === 'postgres' ? sql<SqlBool>`${target} ~ ${pattern}` : sql<SqlBool>`${target} regexp ${pattern}`;
}

function any(parts: RawBuilder<SqlBool>[]): RawBuilder<SqlBool> {
  if (parts.length === 0) return sql<SqlBool>`1 = 0`;
  if (parts.length === 1) return parts[0];
  return sql<SqlBool>`(${sql.join(parts, sql` or `)})`;
}

function refColumn(ref: 'language' | 'component' | 'project'): { sub: (cond: RawBuilder<SqlBool>) => RawBuilder<SqlBool>; column: RawBuilder<unknown> } {
  if (ref === 'language') {
    return { column: sql`l.code`, sub: (cond) => sql<SqlBool>`units.language_id in (select l.id from languages l where ${cond})` };
  }
  if (ref === 'component') {
    return { column: sql`c.slug`, sub: (cond) => sql<SqlBool>`units.component_id in (select c.id from components c where ${cond})` };
  }
  return {
    column: sql`p.slug`,
    sub: (cond) => sql<SqlBool>`units.component_id in (select c.id from components c join translation_projects p on p.id = c.project_id where ${cond})`,
  };
}

function compile(node: QueryNode, dialect: SearchDialect): RawBuilder<SqlBool> {
  switch (node.type) {
    case 'all':
      return sql<SqlBool>`1 = 1`;
    case 'none':
      return sql<SqlBool>`1 = 0`;
    case 'and':
      return sql<SqlBool>`(${sql.join(
        node.children.map((c) => compile(c, dialect)),
        sql` and `,
      )})`;
    case 'or':
      return sql<SqlBool>`(${sql.join(
        node.children.map((c) => compile(c, dialect)),
        sql` or `,
      )})`;
    case 'not':
      return sql<SqlBool>`not (${compile(node.child, dialect)})`;
    case 'text':
      return any(
        node.columns.map((c) => {
          if (node.match === 'exact') return sql<SqlBool>`${col(c)} = ${node.value}`;
          if (node.match === 'regex') return regex(dialect, col(c), node.value);
          return substring(dialect, c, node.value);
        }),
      );
    case 'number':
      return sql<SqlBool>`${col(node.column)} ${sql.raw(OPS[node.op])} ${node.value}`;
    case 'range':
      return sql<SqlBool>`${col(node.column)} between ${node.from} and ${node.to}`;
    case 'in':
      return node.values.length ? sql<SqlBool>`${col(node.column)} in (${sql.join(node.values)})` : sql<SqlBool>`1 = 0`;
    case 'flag':
      return sql<SqlBool>`${col(node.column)} = ${node.value ? 1 : 0}`;
    case 'nonEmpty':
      return sql<SqlBool>`${col(node.column)} <> ''`;
    case 'contains':
      return sql<SqlBool>`${col(node.column)} like ${'%' + likeEscape(node.value) + '%'} escape '\\'`;
    case 'ref': {
      const { column, sub } = refColumn(node.ref);
      if (node.match === 'regex') return sub(regex(dialect, column, node.value));
      if (node.match === 'exact') return sub(sql<SqlBool>`${column} = ${node.value}`);
      return sub(sql<SqlBool>`lower(${column}) = ${node.value.toLowerCase()}`);
    }
    case 'check': {
      // failing_checks is a comma separated list of ids: look for ",id," in ",list,"
      const list = sql`(',' || ${col('failing_checks')} || ',')`;
      return any(node.ids.map((id) => sql<SqlBool>`${list} like ${'%,' + likeEscape(id) + ',%'} escape '\\'`));
    }
    case 'time':
      return sql<SqlBool>`${col(node.column)} ${sql.raw(OPS[node.op])} ${node.value}`;
    case 'related':
      return related(node, dialect);
  }
}

/**
 * `suggestion:`, `comment:`, `suggestion_author:`, `comment_author:` — a row of the unit's suggestions or
 * unresolved comments; `source_comment:`, `source_comment_author:`, `has:source-comment` — of its source
 * string's comments (the unit of the component's source translation with the same id_hash).
 */
function related(node: Extract<QueryNode, { type: 'related' }>, dialect: SearchDialect): RawBuilder<SqlBool> {
  const table = sql.table(node.table);
  const open = node.table === 'comments' ? sql` and r.resolved = 0` : sql``;
  const on = node.onSource
    ? sql`r.unit_id in (select su.id from units su join translations st on st.id = su.translation_id where su.component_id = units.component_id and su.id_hash = units.id_hash and st.is_source = 1)`
    : sql`r.unit_id = units.id`;
  let cond: RawBuilder<SqlBool>;
  if (node.what === 'any') return sql<SqlBool>`exists (select 1 from ${table} r where ${on}${open})`;
  if (node.what === 'author') {
    const name = sql.ref('u.username');
    if (node.match === 'regex') cond = regex(dialect, name, node.value);
    else if (node.match === 'exact') cond = sql<SqlBool>`${name} = ${node.value}`;
    else cond = sql<SqlBool>`lower(${name}) = ${node.value.toLowerCase()}`;
    return sql<SqlBool>`exists (select 1 from ${table} r join users u on u.id = r.user_id where ${on}${open} and ${cond})`;
  }
  const text = sql.ref(node.table === 'suggestions' ? 'r.target' : 'r.comment');
  if (node.match === 'regex') cond = regex(dialect, text, node.value);
  else if (node.match === 'exact') cond = sql<SqlBool>`${text} = ${node.value}`;
  else {
    const pattern = '%' + likeEscape(node.value) + '%';
    if (dialect === 'postgres') cond = sql<SqlBool>`${text} ilike ${pattern} escape '\\'`;
    else if (/^[\x00-\x7f]*$/.test(node.value)) cond = sql<SqlBool>`${text} like ${pattern} escape '\\'`;
    else cond = sql<SqlBool>`${text} regexp ${'(?i)' + regexEscape(node.value)}`;
  }
  return sql<SqlBool>`exists (select 1 from ${table} r where ${on}${open} and ${cond})`;
}

/**
 * Whether the query runs a user's regular expression over the units (its cost is then theirs to
 * choose: run it under a time limit, see db/limited-reads.ts). `check:r"…"` is resolved while parsing.
 */
export function usesRegex(node: QueryNode): boolean {
  switch (node.type) {
    case 'and':
    case 'or':
      return node.children.some(usesRegex);
    case 'not':
      return usesRegex(node.child);
    case 'text':
    case 'ref':
    case 'related':
      return node.match === 'regex';
    default:
      return false;
  }
}

/** The `where` expression of a parsed query over the `units` table. */
export function compileQuery(node: QueryNode, dialect: SearchDialect): Expression<SqlBool> {
  return compile(node, dialect);
}
