// The data set of `npm run bench:scale` (and, small, of the list plans test), generated inside the database: each table is one
// `INSERT … SELECT` over a series of integers (PostgreSQL `generate_series`, SQLite a recursive CTE), so no
// row crosses the wire — as fast as COPY and without a client library for it. At scale S (1 = the
// size of the other benches' largest seeds, 10 = the "10×" of the performance review):
//   100,000·S users, each with a personal namespace; 900·S groups (100·S top-level, 4 subgroups each, one
//   sub-subgroup under each subgroup); 10,000·S projects (a fifth in personal namespaces, a third each
//   public, internal, private); group and project memberships of a fifth of the users; 150,000·S merge
//   requests; 50,000·S pipelines on 1,000 projects; 10·S translation components of 10 languages ×
//   10,000 units (1,000,000·S units).
// The measured user (`user1`) is a Developer of the first top-level group (its subgroups and theirs
// included) and a Reporter of 100 projects elsewhere.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';

export interface ScaleSeed {
  scale: number;
  users: number;
  groups: number;
  projects: number;
  mergeRequests: number;
  issues: number;
  pipelines: number;
  units: number;
  /** the measured user's id and the first top-level group's id */
  member: number;
  topGroup: number;
  /** a project with pipelines and merge requests (in the top group), and a translation path p/c/lang */
  busyProject: number;
  translation: string;
  seconds: Record<string, number>;
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken', 'Radia', 'Niklaus', 'Leslie', 'Tim'];
/** syllables of the coined words (surnames, MR subjects): 8,000 words of three, each as rare as real ones */
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ven', 'tor', 'sel', 'da', 'nu', 'bri', 'gan', 'fel', 'or', 'pin', 'sta', 'mer', 'lu', 'zan', 'tek', 'hol'];
const WORDS = ['fix', 'refactor', 'add', 'remove', 'update', 'cache', 'login', 'parser', 'api', 'docs', 'tests', 'build', 'deploy', 'memory', 'query'];
const LANGS = ['de', 'fr', 'es', 'it', 'ja', 'pt', 'ru', 'pl', 'nl', 'cs'];

/** `case <expr> % n when 0 then 'a' … end`: a word of `list` chosen by an integer expression */
const pick = (list: string[], expr: string) => `(case (${expr}) % ${list.length} ${list.map((w, i) => `when ${i} then '${w}'`).join(' ')} end)`;
/** SQL: the coined word of an integer expression (its three base-20 digits as syllables) */
const coined = (expr: string) => `${pick(SYLLABLES, expr)} || ${pick(SYLLABLES, `(${expr}) / 20`)} || ${pick(SYLLABLES, `(${expr}) / 400`)}`;
/** the same in JavaScript: the coined word of n */
export const coinedWord = (n: number) => [n, Math.floor(n / 20), Math.floor(n / 400)].map((d) => SYLLABLES[d % 20]).join('');
/** the same for numbers */
const pickNumber = (list: number[], expr: string) => `(case (${expr}) % ${list.length} ${list.map((n, i) => `when ${i} then ${n}`).join(' ')} end)`;

/** `unitsPerTranslation`: 10,000 unless given (a test's smaller set) */
export async function seedScale(k: Kysely<Database>, dialect: 'sqlite' | 'postgres', scale: number, unitsPerTranslation = 10_000): Promise<ScaleSeed> {
  const seconds: Record<string, number> = {};
  const count = (n: number, min = 1) => Math.max(min, Math.round(n * scale));
  const U = count(100_000, 1000);
  const T = count(100, 2); // top-level groups
  const G = 9 * T; // all groups
  const P = count(10_000, 1000);
  const MR = count(150_000);
  const PIPE = count(50_000);
  const COMPONENTS = 2 * count(5);
  const UNITS_PER = unitsPerTranslation;

  // ISO 8601 instant `minutes` after 2024-01-01, as the product writes them (toISOString)
  const at = (minutes: string) =>
    dialect === 'postgres'
      ? `to_char(timestamp '2024-01-01' + (${minutes}) * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : `strftime('%Y-%m-%dT%H:%M:%fZ', '2024-01-01', '+' || (${minutes}) || ' minutes')`;
  // one INSERT … SELECT over i = 1..n
  const fill = async (label: string, table: string, columns: Record<string, string>, n: number, suffix = '') => {
    const t0 = performance.now();
    const cols = Object.keys(columns).join(', ');
    const exprs = Object.values(columns).join(', ');
    const text =
      dialect === 'postgres'
        ? `insert into ${table} (${cols}) select ${exprs} from generate_series(1::bigint, ${n}) as g(i) ${suffix}`
        : `with recursive g(i) as (select 1 union all select i + 1 from g where i < ${n}) insert into ${table} (${cols}) select ${exprs} from g where true ${suffix}`;
    await sql.raw(text).execute(k);
    seconds[label] = (seconds[label] ?? 0) + (performance.now() - t0) / 1000;
  };
  const maxId = async (table: string) => Number(((await sql.raw(`select coalesce(max(id), 0) as m from ${table}`).execute(k)).rows[0] as { m: number }).m);
  const now = `'${new Date().toISOString()}'`;

  // --- users and their namespaces ---
  const u0 = await maxId('users');
  await fill(
    'users',
    'users',
    {
      id: `${u0} + i`,
      username: `'user' || i`,
      // about 125 users share a surname
      name: `${pick(FIRST, 'i')} || ' ' || ${coined('i / 14')}`,
      email: `'user' || i || '@example.com'`,
      public_email: `case when i % 10 = 0 then 'user' || i || '@example.com' end`,
      state: `case when i % 50 = 0 then 'blocked' else 'active' end`,
      is_admin: '0',
      external: '0',
      bot: '0',
      user_type: `'human'`,
      private_profile: '0',
      bio: `''`,
      location: `''`,
      job_title: `''`,
      website_url: `''`,
      organization: `''`,
      messenger_a: `''`,
      network_a: `''`,
      network_b: `''`,
      chat_a: `''`,
      projects_limit: '100000',
      can_create_group: '1',
      can_create_project: '1',
      two_factor_enabled: '0',
      theme_id: '3',
      color_scheme_id: '1',
      sign_in_count: '0',
      failed_attempts: '0',
      created_at: at('i'),
      updated_at: at('i + i % 1000'),
      confirmed_at: at('i'),
    },
    U,
  );
  const n0 = await maxId('namespaces');
  const namespace = (over: Record<string, string>) => ({
    request_access_enabled: '1',
    project_creation_level: `'developer'`,
    subgroup_creation_level: `'maintainer'`,
    share_with_group_lock: '0',
    settings: `'{}'`,
    description: `''`,
    created_at: now,
    updated_at: now,
    ...over,
  });
  await fill(
    'namespaces',
    'namespaces',
    namespace({
      id: `${n0} + i`,
      type: `'User'`,
      name: `'user' || i`,
      path: `'user' || i`,
      full_path: `'user' || i`,
      traversal_ids: `'/' || (${n0} + i) || '/'`,
      owner_id: `${u0} + i`,
      visibility: `'public'`,
    }),
    U,
  );
  // groups: tops g0+1..g0+T; subgroups g0+T+1..g0+5T (sub k under top (k-1)%T+1); one sub-subgroup under each
  const g0 = n0 + U;
  const level = pick(['public', 'internal', 'private'], 'i');
  await fill(
    'namespaces',
    'namespaces',
    namespace({
      id: `${g0} + i`,
      type: `'Group'`,
      name: `'Group ' || i`,
      path: `'group-' || i`,
      full_path: `'group-' || i`,
      traversal_ids: `'/' || (${g0} + i) || '/'`,
      visibility: level,
    }),
    T,
  );
  const top = `${g0} + (i - 1) % ${T} + 1`;
  await fill(
    'namespaces',
    'namespaces',
    namespace({
      id: `${g0 + T} + i`,
      type: `'Group'`,
      name: `'Subgroup ' || i`,
      path: `'sub-' || i`,
      full_path: `'group-' || ((i - 1) % ${T} + 1) || '/sub-' || i`,
      parent_id: top,
      traversal_ids: `'/' || (${top}) || '/' || (${g0 + T} + i) || '/'`,
      visibility: `'private'`,
    }),
    4 * T,
  );
  await fill(
    'namespaces',
    'namespaces',
    namespace({
      id: `${g0 + 5 * T} + i`,
      type: `'Group'`,
      name: `'Team ' || i`,
      path: `'team-' || i`,
      full_path: `'group-' || ((i - 1) % ${T} + 1) || '/sub-' || i || '/team-' || i`,
      parent_id: `${g0 + T} + i`,
      traversal_ids: `'/' || (${top}) || '/' || (${g0 + T} + i) || '/' || (${g0 + 5 * T} + i) || '/'`,
      visibility: `'private'`,
    }),
    4 * T,
  );

  // --- projects: i % 5 = 0 in a personal namespace, the rest round the groups ---
  const p0 = await maxId('projects');
  await fill(
    'projects',
    'projects',
    {
      id: `${p0} + i`,
      // the others' index among the group projects is i / 5 * 4 + i % 5 - 1 (0, 1, 2 …): project 1 is the first group's
      namespace_id: `case when i % 5 = 0 then ${n0} + (i * 7919) % ${U} + 1 else ${g0} + ((i / 5) * 4 + i % 5 - 1) % ${G} + 1 end`,
      creator_id: `${u0} + (i * 7919) % ${U} + 1`,
      name: `${pick(WORDS, 'i')} || ' ' || ${pick(WORDS, 'i / 15')} || ' ' || i`,
      path: `'project-' || i`,
      description: `'The ' || ${pick(WORDS, 'i / 7')} || ' service of team ' || (i % 97)`,
      visibility: level,
      default_branch: `'main'`,
      archived: '0',
      repository_storage: `'default'`,
      topics: `'[]'`,
      settings: `'{}'`,
      created_at: at('i'),
      updated_at: at('i + (i * 13) % 5000'),
      last_activity_at: at('i + (i * 13) % 5000'),
    },
    P,
  );

  // --- memberships: user1 a Developer of the first top group and a Reporter of 100 projects; every fifth
  // user a member of one group and two projects ---
  const member = u0 + 1;
  const memberCols = (over: Record<string, string>) => ({ created_at: now, updated_at: now, ...over });
  const conflict = 'on conflict do nothing';
  await fill('members', 'members', memberCols({ source_type: `'Namespace'`, source_id: `${g0 + 1}`, user_id: `${member}`, access_level: '30' }), 1);
  await fill(
    'members',
    'members',
    memberCols({ source_type: `'Project'`, source_id: `${p0} + (i * 97) % ${P} + 1`, user_id: `${member}`, access_level: '20' }),
    100,
    conflict,
  );
  await fill(
    'members',
    'members',
    memberCols({
      source_type: `'Namespace'`,
      source_id: `${g0} + (i * 31) % ${G} + 1`,
      user_id: `${u0} + i * 5`,
      access_level: pickNumber([10, 20, 30, 40, 50], 'i'),
    }),
    U / 5 - 1,
    conflict,
  );
  for (const mult of [131, 137])
    await fill(
      'members',
      'members',
      memberCols({
        source_type: `'Project'`,
        source_id: `${p0} + (i * ${mult}) % ${P} + 1`,
        user_id: `${u0} + i * 5`,
        access_level: pickNumber([10, 20, 30, 40], 'i'),
      }),
      U / 5 - 1,
      conflict,
    );

  // --- merge requests ---
  const mrProject = `${p0} + ((i * 7919) % ${P}) + 1`;
  await fill(
    'merge_requests',
    'merge_requests',
    {
      iid: 'i',
      project_id: mrProject,
      source_project_id: mrProject,
      source_branch: `'feature-' || i`,
      target_branch: `case when i % 10 = 0 then 'stable' else 'main' end`,
      // a word of 15 (every word in a fifteenth of the titles) and a coined subject (each in 190 titles)
      title: `${pick(WORDS, 'i')} || ' ' || ${coined('i / 15')} || ' #' || i`,
      description: `'Changes the ' || ${pick(WORDS, 'i / 3')} || ' of the ' || ${pick(WORDS, 'i / 11')} || ' (' || i || ').'`,
      state: pick(['opened', 'opened', 'merged', 'merged', 'closed'], 'i'),
      author_id: `${u0} + (i * 31) % ${U} + 1`,
      merged_at: `case when i % 5 in (2, 3) then ${at('i * 2 + 60')} end`,
      closed_at: `case when i % 5 = 4 then ${at('i * 2 + 60')} end`,
      created_at: at('i * 2'),
      updated_at: at('i * 2 + (i * 7) % 43200'),
    },
    MR,
  );

  // --- issues: as many as merge requests, on the same projects; 20 labels of the first top-level group, two an
  // issue; an assignee each, and the measured user assigned to a fiftieth ---
  const ISS = MR;
  const i0 = await maxId('issues');
  await fill(
    'issues',
    'issues',
    {
      id: `${i0} + i`,
      iid: 'i',
      project_id: mrProject,
      title: `${pick(WORDS, 'i / 2')} || ' ' || ${coined('i / 15 + 7')} || ' #' || i`,
      description: `'When the ' || ${pick(WORDS, 'i / 5')} || ' of the ' || ${pick(WORDS, 'i / 13')} || ' runs (' || i || ').'`,
      state: pick(['opened', 'opened', 'opened', 'closed'], 'i'),
      author_id: `case when i % 100 = 0 then ${u0 + 1} else ${u0} + (i * 37) % ${U} + 1 end`,
      confidential: `case when i % 20 = 0 then 1 else 0 end`,
      closed_at: `case when i % 4 = 3 then ${at('i * 2 + 60')} end`,
      created_at: at('i * 2'),
      updated_at: at('i * 2 + (i * 11) % 43200'),
    },
    ISS,
  );
  const l0 = await maxId('labels');
  await fill('issues', 'labels', { id: `${l0} + i`, group_id: `${g0 + 1}`, title: `'label-' || i`, color: `'#428bca'`, created_at: now, updated_at: now }, 20);
  for (const label of [`${l0} + i % 20 + 1`, `${l0} + (i * 7 + 3) % 20 + 1`])
    await fill('issues', 'issue_labels', { issue_id: `${i0} + i`, label_id: label, project_id: mrProject, created_at: now }, ISS, 'on conflict do nothing');
  await fill('issues', 'issue_assignees', { issue_id: `${i0} + i`, user_id: `${u0} + (i * 41) % ${U} + 2`, created_at: now }, ISS);
  await fill(
    'issues',
    'issue_assignees',
    { issue_id: `${i0} + i * 50`, user_id: `${member}`, created_at: now },
    Math.floor(ISS / 50),
    'on conflict do nothing',
  );

  // --- pipelines: 50·S on each of the first 1,000 projects ---
  await fill(
    'ci_pipelines',
    'ci_pipelines',
    {
      iid: `(i - 1) / 1000 + 1`,
      project_id: `${p0} + (i - 1) % 1000 + 1`,
      ref: `case when i % 4 = 0 then 'feature-' || (i % 50) else 'main' end`,
      sha: `'0000000000000000000000000000000000' || (100000 + i % 900000)`,
      source: `'push'`,
      status: pick(['success', 'success', 'failed', 'running', 'canceled'], 'i'),
      created_at: at('i'),
      updated_at: at('i + 10'),
    },
    PIPE,
  );

  // --- translation: 10·S components (2 per project) of 10 languages × 10,000 units ---
  const langIds = (await k
    .selectFrom('languages')
    .select(['id', 'code'])
    .where('code', 'in', [...LANGS, 'en'])
    .execute()) as { id: number; code: string }[];
  const en = langIds.find((l) => l.code === 'en')!.id;
  const langs = LANGS.map((code) => langIds.find((l) => l.code === code)!);
  const tp0 = await maxId('translation_projects');
  await fill(
    'translation',
    'translation_projects',
    { id: `${tp0} + i`, name: `'Translation ' || i`, slug: `'tp-' || i`, source_language_id: `${en}`, created_at: now },
    COMPONENTS / 2,
  );
  const c0 = await maxId('components');
  await fill(
    'translation',
    'components',
    {
      id: `${c0} + i`,
      project_id: `${tp0} + (i + 1) / 2`,
      name: `'Component ' || i`,
      slug: `'c-' || i`,
      repo: `'https://example.com/repo-' || i || '.git'`,
      filemask: `'po/*.po'`,
      file_format: `'po'`,
      source_language_id: `${en}`,
      created_at: now,
    },
    COMPONENTS,
  );
  const t0 = await maxId('translations');
  const langOf = (expr: string) => `(case (${expr}) % ${langs.length} ${langs.map((l, j) => `when ${j} then ${l.id}`).join(' ')} end)`;
  const codeOf = (expr: string) =>
    pick(
      langs.map((l) => l.code),
      expr,
    );
  await fill(
    'translation',
    'translations',
    {
      id: `${t0} + i`,
      component_id: `${c0} + (i - 1) / ${langs.length} + 1`,
      language_id: langOf('i - 1'),
      plural_id: '0',
      language_code: codeOf('i - 1'),
      filename: `'po/' || ${codeOf('i - 1')} || '.po'`,
      created_at: now,
    },
    COMPONENTS * langs.length,
  );
  // units of translation t = (i - 1) / UNITS_PER + 1, position (i - 1) % UNITS_PER + 1; states: a fifth each
  // empty, fuzzy, translated, translated, approved
  const tr = `((i - 1) / ${UNITS_PER})`;
  const pos = `((i - 1) % ${UNITS_PER} + 1)`;
  await fill(
    'units',
    'units',
    {
      translation_id: `${t0} + ${tr} + 1`,
      component_id: `${c0} + ${tr} / ${langs.length} + 1`,
      language_id: langOf(tr),
      position: pos,
      id_hash: `(${pos}) * 7919`,
      content_hash: `(${pos}) * 104729`,
      source: `'The ' || ${pick(WORDS, pos)} || ' of the ' || ${pick(WORDS, `${pos} / 15`)} || ' number ' || ${pos}`,
      target: `case when i % 5 = 0 then '' else 'Translated ' || ${pick(WORDS, pos)} || ' ' || ${pos} end`,
      state: pickNumber([0, 10, 20, 20, 30], 'i'),
      num_words: '6',
      source_chars: '32',
      timestamp: now,
      last_updated: now,
    },
    COMPONENTS * langs.length * UNITS_PER,
  );
  const ts = performance.now();
  // the translations' stored statistics, as a scan would leave them
  await sql
    .raw(
      `update translations set total = s.total, total_words = s.total * 6, total_chars = s.total * 32,
        translated = s.translated, translated_words = s.translated * 6, translated_chars = s.translated * 32,
        fuzzy = s.fuzzy, fuzzy_words = s.fuzzy * 6, fuzzy_chars = s.fuzzy * 32,
        approved = s.approved, approved_words = s.approved * 6, approved_chars = s.approved * 32
      from (select translation_id, count(*) as total, sum(case when state >= 20 then 1 else 0 end) as translated,
        sum(case when state = 10 then 1 else 0 end) as fuzzy, sum(case when state = 30 then 1 else 0 end) as approved
        from units where translation_id > ${t0} group by translation_id) as s
      where translations.id = s.translation_id`,
    )
    .execute(k);
  seconds.translation = (seconds.translation ?? 0) + (performance.now() - ts) / 1000;

  if (dialect === 'postgres') {
    for (const table of [
      'users',
      'namespaces',
      'projects',
      'members',
      'merge_requests',
      'issues',
      'labels',
      'ci_pipelines',
      'translation_projects',
      'components',
      'translations',
      'units',
    ])
      await sql.raw(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`).execute(k);
    const ta = performance.now();
    await sql`analyze`.execute(k);
    seconds.analyze = (performance.now() - ta) / 1000;
  }
  // the first group's first project (one of the thousand with pipelines)
  const busy = Number(
    (
      await k
        .selectFrom('projects')
        .select('id')
        .where('namespace_id', '=', g0 + 1)
        .where('id', '<=', p0 + 1000)
        .orderBy('id')
        .executeTakeFirstOrThrow()
    ).id,
  );
  return {
    scale,
    users: U,
    groups: G,
    projects: P,
    mergeRequests: MR,
    issues: ISS,
    pipelines: PIPE,
    units: COMPONENTS * langs.length * UNITS_PER,
    member,
    topGroup: g0 + 1,
    busyProject: busy,
    translation: `tp-1/c-1/${langs[0].code}`,
    seconds,
  };
}

export interface ScalePage {
  name: string;
  url: string;
  /** as root, or as the measured member */
  as: 'root' | 'member';
  search?: boolean;
  /** a search matching a large part of the table: reported, without a bar */
  broad?: boolean;
  /** indexes the page's plans must use (PostgreSQL, with pg_trgm): a search's trigram indexes */
  indexes?: string[];
  /** indexes and search tables (FTS5, migration 033) the page's plans must use on SQLite */
  sqliteIndexes?: string[];
}

/** The list pages the scale bench times and the plans test explains. */
export function scalePages(seed: ScaleSeed): ScalePage[] {
  const { busyProject: busy, topGroup: top } = seed;
  const [tp, comp, lang] = seed.translation.split('/');
  const u = Math.floor(seed.users * 0.4242);
  return [
    { name: 'GET /users (administrator)', url: '/api/v4/users?per_page=20', as: 'root' },
    { name: 'GET /users (member)', url: '/api/v4/users?per_page=20', as: 'member' },
    {
      name: 'GET /users?search=<username prefix>',
      url: `/api/v4/users?search=user${String(u).slice(0, 4)}`,
      as: 'member',
      search: true,
      indexes: ['users_username_trgm'],
      sqliteIndexes: ['users_search'],
    },
    {
      name: 'GET /users?search=<surname> (~125 users)',
      url: `/api/v4/users?search=${coinedWord(Math.floor(u / 14)).slice(0, 6)}`,
      as: 'member',
      search: true,
      indexes: ['users_name_trgm'],
      sqliteIndexes: ['users_search'],
    },
    {
      name: 'GET /users?search=<exact e-mail> (administrator)',
      url: `/api/v4/users?search=user${u + 7}@example.com`,
      as: 'root',
      search: true,
      indexes: ['users_email_lower'],
      sqliteIndexes: ['users_email_lower', 'users_search'],
    },
    {
      name: 'GET /users?search=<exact public e-mail>',
      url: `/api/v4/users?search=user${u - (u % 10) + 10}@example.com`,
      as: 'member',
      search: true,
      indexes: ['users_public_email_lower'],
      sqliteIndexes: ['users_public_email_lower', 'users_search'],
    },
    { name: 'GET /projects (member)', url: '/api/v4/projects?per_page=20', as: 'member' },
    { name: 'GET /projects?membership=true', url: '/api/v4/projects?membership=true&per_page=20', as: 'member' },
    { name: 'GET /projects?order_by=last_activity_at (administrator)', url: '/api/v4/projects?order_by=last_activity_at&per_page=20', as: 'root' },
    {
      name: 'GET /projects?search=<word>',
      url: '/api/v4/projects?search=parser&per_page=20',
      as: 'member',
      search: true,
      indexes: ['projects_name_trgm'],
      sqliteIndexes: ['projects_search'],
    },
    {
      name: 'GET /groups?all_available=true&search=<word>',
      url: '/api/v4/groups?all_available=true&search=team-1&per_page=20',
      as: 'member',
      search: true,
      indexes: ['namespaces_path_trgm'],
      sqliteIndexes: ['namespaces_search'],
    },
    { name: 'GET /groups?all_available=true (member)', url: '/api/v4/groups?all_available=true&per_page=20', as: 'member' },
    { name: 'GET /groups/:id/projects?include_subgroups=true', url: `/api/v4/groups/${top}/projects?include_subgroups=true&per_page=20`, as: 'member' },
    {
      name: 'GET /merge_requests?scope=all&state=opened&order_by=updated_at',
      url: '/api/v4/merge_requests?scope=all&state=opened&order_by=updated_at&per_page=20',
      as: 'member',
    },
    { name: 'GET /merge_requests (created_by_me)', url: '/api/v4/merge_requests?per_page=20', as: 'member' },
    { name: 'GET /groups/:id/merge_requests?state=opened', url: `/api/v4/groups/${top}/merge_requests?state=opened&per_page=20`, as: 'member' },
    {
      name: 'GET /projects/:id/merge_requests?order_by=updated_at',
      url: `/api/v4/projects/${busy}/merge_requests?order_by=updated_at&per_page=20`,
      as: 'member',
    },
    {
      name: 'GET /merge_requests?scope=all&search=<two words>',
      url: `/api/v4/merge_requests?scope=all&search=fix%20${coinedWord(1234)}&per_page=20`,
      as: 'member',
      search: true,
      indexes: ['merge_requests_title_trgm'],
      sqliteIndexes: ['merge_requests_search'],
    },
    {
      name: 'GET /merge_requests?scope=all&search=<a word in 1 of 15 titles>',
      url: '/api/v4/merge_requests?scope=all&search=cache&per_page=20',
      as: 'member',
      search: true,
      broad: true,
    },
    {
      name: 'GET /projects/:id/issues?labels=<two labels>',
      url: `/api/v4/projects/${busy}/issues?labels=label-1,label-2&per_page=20`,
      as: 'member',
    },
    { name: 'GET /issues?scope=all', url: '/api/v4/issues?scope=all&per_page=20', as: 'member' },
    {
      name: 'GET /issues?scope=all&state=opened&order_by=updated_at',
      url: '/api/v4/issues?scope=all&state=opened&order_by=updated_at&per_page=20',
      as: 'member',
    },
    { name: 'GET /issues?scope=assigned_to_me', url: '/api/v4/issues?scope=assigned_to_me&per_page=20', as: 'member' },
    { name: 'GET /issues (created_by_me)', url: '/api/v4/issues?per_page=20', as: 'member' },
    { name: 'GET /groups/:id/issues?state=opened', url: `/api/v4/groups/${top}/issues?state=opened&per_page=20`, as: 'member' },
    {
      name: 'GET /issues?scope=all&search=<two words>',
      url: `/api/v4/issues?scope=all&search=add%20${coinedWord(Math.floor(1234 / 15) + 7)}&per_page=20`,
      as: 'member',
      search: true,
      indexes: ['issues_search_vector'],
      sqliteIndexes: ['issues_words'],
    },
    { name: 'GET /projects/:id/pipelines', url: `/api/v4/projects/${busy}/pipelines?per_page=20`, as: 'member' },
    { name: 'GET /api/translations/…/units/', url: `/api/translations/${tp}/${comp}/${lang}/units/`, as: 'root' },
    { name: 'GET /api/projects/…/statistics/', url: `/api/projects/${tp}/statistics/`, as: 'root' },
    { name: 'GET /api/languages/…/statistics/', url: `/api/languages/${lang}/statistics/`, as: 'root' },
  ];
}
