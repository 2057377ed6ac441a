// The compiled `q` conditions run on real databases: in-memory SQLite, and PostgreSQL (a temporary
// schema) when DATABASE_URL_TEST is set. Each query is checked by the unit ids it returns.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { registerRegexp } from '../../../src/db/regexp.ts';
import { compileQuery, parseQuery, type SearchDialect } from '../../../src/domain/translation/search/query.ts';

interface Db {
  name: SearchDialect;
  k: Kysely<any>;
}

const T0 = '2020-06-01T12:00:00.000Z';
// id, language, component, source, target, context, state, extra columns
const UNITS: Record<string, unknown>[] = [
  {
    id: 1,
    language_id: 1,
    component_id: 1,
    source: 'Hello world',
    target: 'Hallo Welt',
    context: 'greeting',
    state: 20,
    location: 'src/a.c:1',
    flags: 'c-format',
    timestamp: '2019-03-15T10:00:00.000Z',
    position: 1,
  },
  { id: 2, language_id: 2, component_id: 1, source: 'Hello world', target: '', state: 0, position: 1 },
  {
    id: 3,
    language_id: 2,
    component_id: 1,
    source: '%d file\x1e%d files',
    target: '%d soubor\x1e%d soubory\x1e%d souborů',
    state: 10,
    priority: 80,
    has_failing_check: 1,
    failing_checks: 'c_format,plurals',
    position: 2,
  },
  {
    id: 4,
    language_id: 1,
    component_id: 2,
    source: '100% sure_thing',
    target: '100% sicher',
    state: 30,
    note: 'Translators: keep it short',
    explanation: 'An explanation',
    position: 1,
  },
  {
    id: 5,
    language_id: 1,
    component_id: 3,
    source: 'Ärger über Öl',
    target: 'ÄRGER',
    state: 100,
    has_comment: 1,
    extra_flags: 'max-length:10',
    pending: 1,
    position: 1,
  },
  {
    id: 6,
    language_id: 1,
    component_id: 1,
    source: 'back\\slash',
    target: 'zurück\\schräg',
    state: 20,
    priority: 120,
    has_suggestion: 1,
    has_failing_check: 1,
    failing_checks: 'same',
    timestamp: '2021-01-01T00:00:00.000Z',
    position: 6,
  },
  { id: 7, language_id: 1, component_id: 1, source: 'Save', target: 'Speichern', context: 'menu.save', state: 12, position: 7 },
  { id: 8, language_id: 1, component_id: 1, source: 'OR', target: 'ODER', state: 11, position: 8 },
];
const ALL = UNITS.map((u) => u.id as number);

async function setUp(k: Kysely<any>): Promise<void> {
  await sql`create table languages (id integer primary key, code text not null)`.execute(k);
  await sql`create table translation_projects (id integer primary key, slug text not null)`.execute(k);
  await sql`create table components (id integer primary key, project_id integer not null, slug text not null)`.execute(k);
  await sql`create table units (
    id integer primary key, translation_id integer not null, component_id integer not null, language_id integer not null,
    position integer not null, id_hash text not null, content_hash text not null,
    source text not null default '', target text not null default '', previous_source text not null default '',
    context text not null default '', note text not null default '', location text not null default '',
    flags text not null default '', explanation text not null default '', extra_flags text not null default '',
    state integer not null default 0, num_words integer not null default 0, source_chars integer not null default 0,
    priority integer not null default 100, has_suggestion integer not null default 0, has_comment integer not null default 0,
    has_failing_check integer not null default 0, failing_checks text not null default '', pending integer not null default 0,
    timestamp text not null, last_updated text not null)`.execute(k);
  await k
    .insertInto('languages')
    .values([
      { id: 1, code: 'de' },
      { id: 2, code: 'cs' },
      { id: 3, code: 'pt_BR' },
    ])
    .execute();
  await k
    .insertInto('translation_projects')
    .values([
      { id: 1, slug: 'demo' },
      { id: 2, slug: 'other' },
    ])
    .execute();
  await k
    .insertInto('components')
    .values([
      { id: 1, project_id: 1, slug: 'app' },
      { id: 2, project_id: 1, slug: 'docs' },
      { id: 3, project_id: 2, slug: 'web' },
    ])
    .execute();
  for (const u of UNITS) {
    await k
      .insertInto('units')
      .values({ translation_id: 1, id_hash: '0', content_hash: '0', timestamp: T0, ...u, last_updated: (u.timestamp as string) ?? T0 })
      .execute();
  }
}

async function sqlite(): Promise<Db> {
  const database = new Database(':memory:');
  registerRegexp(database);
  const k = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
  await setUp(k);
  return { name: 'sqlite', k };
}

async function postgres(url: string): Promise<Db> {
  const schema = 't_search_' + crypto.randomBytes(5).toString('hex');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path=${schema}` });
  const k = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  const ready = setUp(k);
  after(async () => {
    await ready.catch(() => undefined);
    await k.destroy().catch(() => undefined);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop schema ${schema} cascade`);
    await c.end();
  });
  await ready;
  return { name: 'postgres', k };
}

const databases: Promise<Db>[] = [sqlite()];
if (process.env.DATABASE_URL_TEST) databases.push(postgres(process.env.DATABASE_URL_TEST));

async function ids(db: Db, q: string): Promise<number[]> {
  const rows = await db.k
    .selectFrom('units')
    .select('id')
    .where(compileQuery(parseQuery(q), db.name))
    .orderBy('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

const CASES: [string, number[]][] = [
  ['', ALL],
  // words: case-insensitive substrings of source, target or context; every word must match
  ['hello', [1, 2]],
  ['HELLO World', [1, 2]],
  ['welt', [1]],
  ['greeting', [1]],
  ['"hello world"', [1, 2]],
  ["'world hello'", []],
  ['ärger', [5]],
  ['öl ärger', [5]],
  ['r"^S"', [7]],
  // LIKE metacharacters are literal
  ['%', [3, 4]],
  ['source:_', [4]],
  ['source:\\', [6]],
  ['source:"k\\\\s"', [6]],
  // fields
  ['source:hello', [1, 2]],
  ['target:hallo', [1]],
  ['source:="Hello world"', [1, 2]],
  ['source:="hello world"', []],
  ['source:r"^%d"', [3]],
  ['source:r"(?i)^hello"', [1, 2]],
  ['target:r"[ěščřžýáíéů]$"', [3]],
  ['context:menu', [7]],
  ['key:menu.save', [7]],
  ['note:translators', [4]],
  ['location:src/a.c', [1]],
  ['explanation:EXPLANATION', [4]],
  ['flags:c-format', [1]],
  ['flags:max-length', [5]],
  // states (reference §4.2)
  ['state:>=translated', [1, 4, 5, 6]],
  ['state:<translated', [2, 3, 7, 8]],
  ['state:translated', [1, 6]],
  ['state:empty', [2]],
  ['state:needs-checking', [7]],
  ['state:needs-rewriting', [8]],
  ['state:[10 to 12]', [3, 7, 8]],
  ['state:[fuzzy to translated]', [1, 3, 6, 7, 8]],
  ['state:100', [5]],
  ['state:read-only', [5]],
  ['is:translated', [1, 4, 5, 6]],
  ['is:untranslated', [2, 3, 7, 8]],
  ['is:fuzzy', [3]],
  ['is:approved', [4]],
  ['is:readonly', [5]],
  ['is:pending', [5]],
  // has:
  ['has:plural', [3]],
  ['has:context', [1, 7]],
  ['has:suggestion', [6]],
  ['has:comment', [5]],
  ['has:check', [3, 6]],
  ['has:note', [4]],
  ['has:location', [1]],
  ['has:flags', [5]],
  ['has:explanation', [4]],
  ['has:translation', [1, 4, 5, 6]],
  ['has:screenshot', []],
  // numbers
  ['priority:>100', [6]],
  ['priority:<=80', [3]],
  ['priority:100', [1, 2, 4, 5, 7, 8]],
  ['id:2,3', [2, 3]],
  ['id:[2 to 4]', [2, 3, 4]],
  ['id:>=7', [7, 8]],
  ['position:7', [7]],
  ['pending:yes', [5]],
  ['pending:0', [1, 2, 3, 4, 6, 7, 8]],
  // language, component, project
  ['language:de', [1, 4, 5, 6, 7, 8]],
  ['language:CS', [2, 3]],
  ['language:=CS', []],
  ['language:r"^c"', [2, 3]],
  ['component:docs', [4]],
  ['component:app', [1, 2, 3, 6, 7, 8]],
  ['project:other', [5]],
  ['project:demo', [1, 2, 3, 4, 6, 7, 8]],
  // failing checks
  ['check:c_format', [3]],
  ['check:c-format', [3]],
  ['check:plurals', [3]],
  ['check:same', [6]],
  ['check:format', []],
  ['check:r"^(same|plurals)$"', [3, 6]],
  // timestamps
  ['added:2019', [1]],
  ['added:[2019-01-01 to 2020-06-01]', [1, 2, 3, 4, 5, 7, 8]],
  ['added:>2020-06-02', [6]],
  ['last_changed:<2020', [1, 2, 3, 4, 5, 7, 8]],
  ['added:2020-06-01T12:00:00Z', [2, 3, 4, 5, 7, 8]],
  // boolean operators and precedence
  ['hello AND NOT language:cs', [1]],
  ['hello OR save', [1, 2, 7]],
  ['NOT is:translated', [2, 3, 7, 8]],
  ['not hello', [3, 4, 5, 6, 7, 8]],
  ['(hello OR save) AND state:>=20', [1]],
  ['hello save OR welt', [1]],
  ['save OR hello language:cs', [2, 7]],
  ['(save OR hello) language:cs', [2]],
  // a keyword that cannot be an operator is a word ("or" is in "world", "soubory")
  ['source:or', [1, 2, 8]],
  ['OR', [1, 2, 3, 8]],
  ['hello OR', [1, 2]],
];

test('compiled queries return the expected units', async (t) => {
  for (const db of await Promise.all(databases)) {
    for (const [q, expected] of CASES) {
      await t.test(`${db.name}: ${q || '(empty)'}`, async () => {
        assert.deepEqual(await ids(db, q), expected);
      });
    }
  }
});

test('state comparisons can use the (state, id) index on SQLite', async () => {
  const database = new Database(':memory:');
  const k = new Kysely<any>({ dialect: new SqliteDialect({ database }) });
  await setUp(k);
  database.exec('create index units_state on units (state, id)');
  for (const q of ['state:>=translated', 'is:fuzzy', 'state:[10 to 12]']) {
    const compiled = k
      .selectFrom('units')
      .select('id')
      .where(compileQuery(parseQuery(q), 'sqlite'))
      .compile();
    const plan = database.prepare(`explain query plan ${compiled.sql}`).all(...(compiled.parameters as unknown[])) as { detail: string }[];
    assert.match(plan.map((p) => p.detail).join('\n'), /USING COVERING INDEX units_state \(state/, q);
  }
  await k.destroy();
});
