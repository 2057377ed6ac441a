import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// SQLite: substring indexes for `search=` (what migration 032's pg_trgm indexes are on PostgreSQL). For each
// searched table an FTS5 table `<table>_search` with the trigram tokenizer (case-insensitive), whose content is
// the table itself (external content: the index holds no copy of the text), keyed by the row's id:
// - users_search (name, username): the users search (users-query.ts `filterUsers`)
// - projects_search (path, name, description): the projects search; a search of the namespaces' full paths
//   reads namespaces_search too (projects-query.ts `searchCondition`)
// - namespaces_search (name, path, full_path): the groups and namespaces searches
// - merge_requests_search (title, description): the merge request search
// Triggers keep each index in step with its table: after an insert, after a delete, and after an update that
// changes an indexed column (the old values out, the new in). `searchMatch` in db/sql.ts turns a search into
// a MATCH of quoted phrases; the searches keep their LIKE as the exact test of the rows the index finds.
// A phrase of 3 characters or more matches where the column holds it (trigrams in a row); shorter terms find
// nothing in a trigram index, and those searches keep their LIKE over the table.
const SEARCH_INDEXES: Record<string, string[]> = {
  users: ['name', 'username'],
  projects: ['path', 'name', 'description'],
  namespaces: ['name', 'path', 'full_path'],
  merge_requests: ['title', 'description'],
};

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const [table, columns] of Object.entries(SEARCH_INDEXES)) await searchIndex(db, table, columns);
}

async function searchIndex(db: Kysely<any>, table: string, columns: string[]): Promise<void> {
  const fts = `${table}_search`;
  const cols = columns.join(', ');
  const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ');
  const changed = columns.map((c) => `old.${c} is not new.${c}`).join(' or ');
  const insert = `insert into ${fts} (rowid, ${cols}) values (new.id, ${values('new')});`;
  const remove = `insert into ${fts} (${fts}, rowid, ${cols}) values ('delete', old.id, ${values('old')});`;
  // columnsize=0: no per-row token counts (they serve ranking, which the searches do not use)
  await sql.raw(`create virtual table ${fts} using fts5(${cols}, content='${table}', content_rowid='id', tokenize='trigram', columnsize=0)`).execute(db);
  await sql.raw(`create trigger ${fts}_insert after insert on ${table} begin ${insert} end`).execute(db);
  await sql.raw(`create trigger ${fts}_delete after delete on ${table} begin ${remove} end`).execute(db);
  await sql.raw(`create trigger ${fts}_update after update of ${cols} on ${table} when ${changed} begin ${remove} ${insert} end`).execute(db);
  // the rows already there
  await sql.raw(`insert into ${fts} (${fts}) values ('rebuild')`).execute(db);
}
