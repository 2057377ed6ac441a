// Dialect-specific SQL lives here (and in migrations) only.
import { sql, type Expression, type RawBuilder, type SqlBool, type Kysely } from 'kysely';
import type { DialectName } from './connect.ts';

/** The range of an integer column (PostgreSQL `integer`, the type of every id and count here). */
export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

/** A value an integer column can hold (a larger id names nothing: PostgreSQL would refuse to compare it). */
export function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX;
}

/** Case-insensitive substring match, `%`/`_` in the needle taken literally. */
export function ciContains(_dialect: DialectName, column: string, needle: string): Expression<SqlBool> {
  const escaped = '%' + needle.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c) + '%';
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${escaped} escape '\\'`;
}

/**
 * `column` (a namespace's traversal path, '/1/5/') lies in the subtree of `prefix` (a traversal path,
 * which ends in '/'): a range, so the btree index answers it. Traversal paths hold digits and slashes and
 * compare byte by byte (PostgreSQL: collation "C"); '0' follows '/', so '/1/' … '/10' holds exactly the
 * paths that start with '/1/'.
 */
export function inSubtree(column: string, prefix: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(column)} >= ${prefix} and ${sql.ref(column)} < ${prefix.slice(0, -1) + '0'})`;
}

/** inSubtree with the prefix taken from another column (a join: every namespace under a membership's group). */
export function inSubtreeOf(column: string, prefixColumn: string): Expression<SqlBool> {
  const p = sql.ref(prefixColumn);
  return sql<SqlBool>`(${sql.ref(column)} >= ${p} and ${sql.ref(column)} < substr(${p}, 1, length(${p}) - 1) || '0')`;
}

/** The tables with a SQLite search index (`<table>_search`, migration 033) and the columns it holds. */
export const SEARCH_INDEXES = {
  users: ['name', 'username'],
  projects: ['path', 'name', 'description'],
  namespaces: ['name', 'path', 'full_path'],
  merge_requests: ['title', 'description'],
  issues: ['title', 'description'],
} as const;
export type SearchIndexes = { [T in keyof typeof SEARCH_INDEXES]: (typeof SEARCH_INDEXES)[T][number] };

/**
 * The MATCH expression of a SQLite search index that finds the rows holding every term in one column, in any
 * of `columns`: `{title} : ("a" AND "b")`, each term a quoted phrase (a `"` doubled), so that it holds no
 * operator. A trigram index finds a phrase of 3 characters or more wherever the column holds it, in any case
 * (case folding of Unicode, where SQLite's `lower()` and `LIKE` fold ASCII only: the index finds at least what
 * the LIKE of a search does). The expression may find more (the caller's own condition tests each row): when
 * `columns` are all the index holds, the terms anywhere in the row (a column filter per term costs the index a
 * look at every position of a common term). Null when a term is shorter than 3 characters: the index finds
 * nothing in it.
 */
export function searchMatch<T extends keyof SearchIndexes>(table: T, columns: readonly SearchIndexes[T][], terms: readonly string[]): string | null {
  if (!columns.length || !terms.length || terms.some((t) => [...t].length < 3)) return null;
  const all = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
  if (SEARCH_INDEXES[table].every((c) => (columns as readonly string[]).includes(c))) return all;
  return columns.map((c) => `{${c}} : (${all})`).join(' OR ');
}

/**
 * SQLite: `idColumn` is a row of `table` that its search index finds for `terms` in `columns` (see
 * `searchMatch`): a set of ids read from the index. Null where the index cannot answer (a term shorter than 3
 * characters). The rows it gives are candidates: the search keeps its own condition as the exact test.
 */
export function inSearchIndex<T extends keyof SearchIndexes>(
  idColumn: string,
  table: T,
  columns: readonly SearchIndexes[T][],
  terms: readonly string[],
): Expression<SqlBool> | null {
  const match = searchMatch(table, columns, terms);
  return match === null ? null : sql<SqlBool>`${sql.ref(idColumn)} in (${searchIndexIds(table, match)})`;
}

/** SQLite: the ids of the rows of `table` whose search index matches `match` (see `searchMatch`). */
export function searchIndexIds(table: keyof SearchIndexes, match: string): RawBuilder<number> {
  const fts = sql.table(`${table}_search`);
  return sql<number>`select rowid from ${fts} where ${fts} match ${match}`;
}

/** Case-insensitive equality. */
export function ciEquals(column: string, value: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) = ${value.toLowerCase()}`;
}

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** ` for update skip locked` on PostgreSQL, nothing on SQLite (a single writer already serialises). */
export function skipLocked(dialect: DialectName) {
  return dialect === 'postgres' ? sql` for update skip locked` : sql``;
}

export async function ping(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}
