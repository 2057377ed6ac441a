import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Issues' full-text search, as GitLab's (PgFullTextSearchable on the issue's title, weight A, and description,
// weight B; IssuableFinder#by_search uses it for a query in Latin script): words and their prefixes, English
// stemming. PostgreSQL keeps a tsvector beside each issue (a stored generated column, with a GIN index for the
// rare words; a common word's count reads it row by row, where matching the texts with LIKE lowered each); SQLite
// an FTS5 index of words (Porter's stemmer) beside the trigram index that other scripts' queries keep using.
// The text indexed is each column's first 250,000 characters: a tsvector holds 1 MB at most (GitLab skips an
// issue whose text is too long for one; here its text past that is not indexed).
export const INDEXED_CHARACTERS = 250_000;

/**
 * The Latin letters with diacritics that decompose into an ASCII letter and marks (é → e), as two strings for
 * PostgreSQL's translate(): the indexed text loses its accents as the query does (GitLab transliterates both).
 */
export function accentMap(): { from: string; to: string } {
  let from = '';
  let to = '';
  for (let cp = 0xc0; cp <= 0x24f; cp++) {
    const ch = String.fromCodePoint(cp);
    const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
    if (base !== ch && /^[A-Za-z]$/.test(base)) {
      from += ch;
      to += base;
    }
  }
  return { from, to };
}

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  // What decides whether a list may show an issue (state, visibility, project, confidential, author) by its id, in
  // one index: X-Total's count of the global lists reads up to 10,001 of them from it alone (PostgreSQL: an
  // index-only scan, 6 ms where reading the rows, the tsvector among them, took 14), as the assigned list its
  // issues by id. The id leads, so that no list's filter (state = 'opened') picks it over its order's index
  // (SQLite did, and sorted 60,000 issues).
  await sql`create index issues_readable on issues (id, state, visibility, project_id, confidential, author_id)`.execute(db);
  if (dialect === 'postgres') {
    const { from, to } = accentMap();
    const vector = (column: string, weight: string) =>
      `setweight(to_tsvector('english', translate(left(coalesce(${column}, ''), ${INDEXED_CHARACTERS}), '${from}', '${to}')), '${weight}')`;
    await sql
      .raw(`alter table issues add column search_vector tsvector generated always as (${vector('title', 'A')} || ${vector('description', 'B')}) stored`)
      .execute(db);
    await sql`create index issues_search_vector on issues using gin (search_vector)`.execute(db);
    await sql`analyze issues`.execute(db);
    return;
  }
  // contentless (the texts stay in `issues` alone), rows deleted by id
  const fts = 'issues_words';
  const text = (row: string, column: string) => `substr(${row}.${column}, 1, ${INDEXED_CHARACTERS})`;
  const insert = `insert into ${fts} (rowid, title, description) values (new.id, ${text('new', 'title')}, ${text('new', 'description')});`;
  await sql
    .raw(`create virtual table ${fts} using fts5(title, description, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')`)
    .execute(db);
  await sql.raw(`create trigger ${fts}_insert after insert on issues begin ${insert} end`).execute(db);
  await sql.raw(`create trigger ${fts}_delete after delete on issues begin delete from ${fts} where rowid = old.id; end`).execute(db);
  await sql
    .raw(
      `create trigger ${fts}_update after update of title, description on issues
        when old.title is not new.title or old.description is not new.description begin
        delete from ${fts} where rowid = old.id; ${insert} end`,
    )
    .execute(db);
  await sql
    .raw(`insert into ${fts} (rowid, title, description) select id, ${text('issues', 'title')}, ${text('issues', 'description')} from issues`)
    .execute(db);
}
