import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// The issue tracker. Until now `issues` only kept what a project archive carried (labels as a JSON array of
// titles, assignees as a JSON array of ids); it becomes GitLab's model:
// - issue columns for the API (issue_type, time tracking, vote and note counters, edit and move facts,
//   relative_position) and `visibility`, who may read the issue's project's issues, kept by triggers as
//   merge_requests.visibility is (migration 034), narrowed by the project's issues feature;
// - issue_assignees and issue_labels, filled from the JSON columns, which go (a title no label of the project
//   or its groups has any more becomes a project label, so nothing an issue showed is lost);
// - issue_links (relates_to | blocks; "is_blocked_by" is a `blocks` link read from its target);
// - the resource events (label, milestone, state) hang off an issue or a merge request: `issue_id`, and
//   merge_request_id may be null (SQLite rebuilds the tables to drop the NOT NULL);
// - todos (GitLab's: a user's to-do items on issues and merge requests);
// - boards and their lists (project or group boards; lists by label, milestone or assignee, plus the
//   backlog and closed lists);
// - the search indexes of issue titles and descriptions (SQLite FTS5 trigram; PostgreSQL pg_trgm when there).

/** SQL: the issue visibility of a project row `p` (both databases), as 034's for merge requests. */
const issueVisibility = (p: string) => `(case
  when ${p}.settings like '%"issues_access_level":"disabled"%' then 'disabled'
  when ${p}.visibility = 'private' or ${p}.settings like '%"issues_access_level":"private"%' then 'private'
  else ${p}.visibility end)`;

const EVENT_TABLES = ['resource_label_events', 'resource_milestone_events', 'resource_state_events'] as const;

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const pg = dialect === 'postgres';
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    pg ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const flag = (def: number) => (c: any) => c.notNull().defaultTo(def);
  const issue = (c: any) => c.notNull().references('issues.id').onDelete('cascade');

  // ---- issue columns ----------------------------------------------------------------------------
  const columns: [string, 'text' | 'integer', ((c: any) => any) | undefined][] = [
    ['issue_type', 'text', (c) => c.notNull().defaultTo('issue')], // issue | incident
    ['time_estimate', 'integer', flag(0)],
    ['total_time_spent', 'integer', flag(0)],
    ['upvotes', 'integer', flag(0)],
    ['downvotes', 'integer', flag(0)],
    ['user_notes_count', 'integer', flag(0)],
    ['relative_position', 'integer', undefined],
    ['moved_to_id', 'integer', undefined],
    ['duplicated_to_id', 'integer', undefined],
    ['updated_by_id', 'integer', undefined],
    ['last_edited_by_id', 'integer', undefined],
    ['last_edited_at', 'text', undefined],
    ['visibility', 'text', (c) => c.notNull().defaultTo('private')],
  ];
  for (const [name, type, build] of columns) {
    await db.schema
      .alterTable('issues')
      .addColumn(name, type, build ?? ((c) => c))
      .execute();
  }

  // ---- assignees and labels as rows -----------------------------------------------------------------
  await db.schema
    .createTable('issue_assignees')
    .addColumn('issue_id', 'integer', issue)
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('issue_assignees_pk', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_assignees_user').on('issue_assignees').columns(['user_id', 'issue_id']).execute();
  await db.schema
    .createTable('issue_labels')
    .addColumn('issue_id', 'integer', issue)
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('issue_labels_pk', ['issue_id', 'label_id'])
    .execute();
  await db.schema.createIndex('issue_labels_label').on('issue_labels').columns(['label_id', 'issue_id']).execute();
  await moveJsonColumns(db);
  await db.schema.alterTable('issues').dropColumn('assignee_ids').execute();
  await db.schema.alterTable('issues').dropColumn('labels').execute();

  // ---- list indexes (as merge requests': migration 016) ------------------------------------------------
  const index = (name: string, table: string, cols: string[]) => db.schema.createIndex(name).on(table).columns(cols).execute();
  await index('issues_created', 'issues', ['created_at', 'id']);
  await index('issues_updated', 'issues', ['updated_at', 'id']);
  await index('issues_project_created', 'issues', ['project_id', 'created_at', 'id']);
  await index('issues_author_created', 'issues', ['author_id', 'created_at', 'id']);
  await index('issues_milestone', 'issues', ['milestone_id']);

  // ---- links between issues ------------------------------------------------------------------------
  await id(db.schema.createTable('issue_links'))
    .addColumn('source_id', 'integer', issue)
    .addColumn('target_id', 'integer', issue)
    .addColumn('link_type', 'text', (c) => c.notNull().defaultTo('relates_to')) // relates_to | blocks
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index issue_links_unique on issue_links (source_id, target_id)`.execute(db);
  await index('issue_links_target', 'issue_links', ['target_id', 'source_id']);

  // ---- resource events of issues ----------------------------------------------------------------------
  for (const t of EVENT_TABLES) {
    if (pg) {
      await sql`alter table ${sql.table(t)} alter column merge_request_id drop not null`.execute(db);
      await sql`alter table ${sql.table(t)} add column issue_id integer references issues (id) on delete cascade`.execute(db);
    } else {
      await rebuildSqliteEventTable(db, t);
    }
    await index(`${t}_issue`, t, ['issue_id', 'id']);
  }

  // ---- to-do items ---------------------------------------------------------------------------------
  // action: GitLab's Todo action ids (1 assigned, 2 mentioned, 4 marked, 7 directly addressed, …);
  // state: pending | done; target_type: Issue | MergeRequest.
  await id(db.schema.createTable('todos'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('author_id', 'integer')
    .addColumn('action', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('note_id', 'integer')
    .addColumn('body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index('todos_user_state', 'todos', ['user_id', 'state', 'id']);
  await index('todos_target', 'todos', ['target_type', 'target_id', 'user_id']);

  // ---- boards ------------------------------------------------------------------------------------------
  await id(db.schema.createTable('boards'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hide_backlog_list', 'integer', flag(0))
    .addColumn('hide_closed_list', 'integer', flag(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index('boards_project', 'boards', ['project_id', 'id']);
  await index('boards_group', 'boards', ['group_id', 'id']);
  // list_type: backlog | label | closed | assignee | milestone; position orders the movable lists (label,
  // assignee, milestone), null for backlog and closed.
  await id(db.schema.createTable('board_lists'))
    .addColumn('board_id', 'integer', (c) => c.notNull().references('boards.id').onDelete('cascade'))
    .addColumn('list_type', 'text', (c) => c.notNull())
    .addColumn('label_id', 'integer', (c) => c.references('labels.id').onDelete('cascade'))
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('position', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index('board_lists_board', 'board_lists', ['board_id', 'position', 'id']);

  await trackTableVersions(db, dialect, ['issue_assignees', 'issue_labels', 'issue_links', 'todos', 'boards', 'board_lists', ...EVENT_TABLES]);

  // ---- who may read an issue, kept on the row ----------------------------------------------------------
  await sql
    .raw(
      `update issues set visibility = ${issueVisibility('p')} from projects p
        where p.id = issues.project_id and ${issueVisibility('p')} <> 'private'`,
    )
    .execute(db);
  if (pg) {
    await sql
      .raw(`create function issues_visibility_of_project() returns trigger language plpgsql as $$
      begin
        new.visibility := coalesce((select ${issueVisibility('p')} from projects p where p.id = new.project_id), 'private');
        return new;
      end $$`)
      .execute(db);
    await sql
      .raw(`create trigger issues_visibility before insert or update of project_id on issues
        for each row execute function issues_visibility_of_project()`)
      .execute(db);
    await sql
      .raw(`create function projects_visibility_to_issues() returns trigger language plpgsql as $$
      begin
        update issues set visibility = ${issueVisibility('new')} where project_id = new.id;
        return null;
      end $$`)
      .execute(db);
    await sql
      .raw(`create trigger projects_issue_visibility after update of visibility, settings on projects for each row
        when (${issueVisibility('old')} is distinct from ${issueVisibility('new')})
        execute function projects_visibility_to_issues()`)
      .execute(db);
  } else {
    for (const [name, when] of [
      ['issues_visibility', 'after insert on issues'],
      ['issues_visibility_move', 'after update of project_id on issues'],
    ]) {
      await sql
        .raw(`create trigger ${name} ${when} begin
          update issues set visibility = coalesce((select ${issueVisibility('p')} from projects p
            where p.id = new.project_id), 'private') where id = new.id;
        end`)
        .execute(db);
    }
    await sql
      .raw(`create trigger projects_issue_visibility after update of visibility, settings on projects
        when ${issueVisibility('old')} is not ${issueVisibility('new')} begin
        update issues set visibility = ${issueVisibility('new')} where project_id = new.id;
      end`)
      .execute(db);
  }

  // ---- search indexes -----------------------------------------------------------------------------------
  if (pg) {
    const schema = (
      await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace
        where e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema;
    if (schema) {
      for (const column of ['title', 'description']) {
        await sql`create index ${sql.id(`issues_${column}_trgm`)} on issues using gin (lower(${sql.ref(column)}) ${sql.id(schema)}.gin_trgm_ops)`.execute(db);
        await sql`create statistics ${sql.id(`issues_${column}_lower`)} on (lower(${sql.ref(column)})) from issues`.execute(db);
      }
      await sql`analyze issues`.execute(db);
    }
  } else {
    const fts = 'issues_search';
    const remove = `insert into ${fts} (${fts}, rowid, title, description) values ('delete', old.id, old.title, old.description);`;
    const insert = `insert into ${fts} (rowid, title, description) values (new.id, new.title, new.description);`;
    await sql
      .raw(`create virtual table ${fts} using fts5(title, description, content='issues', content_rowid='id', tokenize='trigram', columnsize=0)`)
      .execute(db);
    await sql.raw(`create trigger ${fts}_insert after insert on issues begin ${insert} end`).execute(db);
    await sql.raw(`create trigger ${fts}_delete after delete on issues begin ${remove} end`).execute(db);
    await sql
      .raw(
        `create trigger ${fts}_update after update of title, description on issues
          when old.title is not new.title or old.description is not new.description begin ${remove} ${insert} end`,
      )
      .execute(db);
    await sql.raw(`insert into ${fts} (${fts}) values ('rebuild')`).execute(db);
  }
}

/**
 * issues.assignee_ids and issues.labels (JSON) → issue_assignees and issue_labels. A label title is looked up
 * in the issue's project first, then in its groups from the nearest; a title none of them has becomes a
 * project label (GitLab's import default colour), so that the issue keeps it.
 */
async function moveJsonColumns(db: Kysely<any>): Promise<void> {
  let after = 0;
  for (;;) {
    const rows: { id: number; project_id: number; assignee_ids: string; labels: string; created_at: string }[] = await db
      .selectFrom('issues')
      .select(['id', 'project_id', 'assignee_ids', 'labels', 'created_at'])
      .where('id', '>', after)
      .where((eb: any) => eb.or([eb('assignee_ids', '<>', '[]'), eb('labels', '<>', '[]')]))
      .orderBy('id')
      .limit(500)
      .execute();
    if (rows.length === 0) return;
    after = rows[rows.length - 1].id;
    for (const r of rows) {
      const users = new Set((JSON.parse(r.assignee_ids || '[]') as unknown[]).filter((u): u is number => Number.isInteger(u)));
      for (const user_id of users) {
        await db.insertInto('issue_assignees').values({ issue_id: r.id, user_id, created_at: r.created_at }).execute();
      }
      const titles = new Set((JSON.parse(r.labels || '[]') as unknown[]).filter((t): t is string => typeof t === 'string' && t !== ''));
      for (const title of titles) {
        const label_id = await labelFor(db, r.project_id, title, r.created_at);
        await db
          .insertInto('issue_labels')
          .values({ issue_id: r.id, label_id, created_at: r.created_at })
          .onConflict((oc: any) => oc.doNothing())
          .execute();
      }
    }
  }
}

async function labelFor(db: Kysely<any>, projectId: number, title: string, at: string): Promise<number> {
  const own = await db.selectFrom('labels').select('id').where('project_id', '=', projectId).where('title', '=', title).executeTakeFirst();
  if (own) return own.id;
  const project = await db
    .selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select('namespaces.traversal_ids')
    .where('projects.id', '=', projectId)
    .executeTakeFirstOrThrow();
  const groups = String(project.traversal_ids).split('/').filter(Boolean).map(Number).reverse();
  for (const group_id of groups) {
    const inherited = await db.selectFrom('labels').select('id').where('group_id', '=', group_id).where('title', '=', title).executeTakeFirst();
    if (inherited) return inherited.id;
  }
  const created = await db
    .insertInto('labels')
    .values({ project_id: projectId, group_id: null, title, color: '#6699cc', description: null, priority: null, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return created.id;
}

/** SQLite cannot drop a NOT NULL: the event table is copied into its new shape (with issue_id) and renamed. */
async function rebuildSqliteEventTable(db: Kysely<any>, table: (typeof EVENT_TABLES)[number]): Promise<void> {
  const extra: Record<typeof table, string> = {
    resource_label_events: 'label_id integer references labels (id) on delete set null, user_id integer, action text not null,',
    resource_milestone_events:
      'milestone_id integer references milestones (id) on delete set null, user_id integer, action text not null, state text not null,',
    resource_state_events: 'user_id integer, state text not null, source_commit text,',
  };
  const cols: Record<typeof table, string> = {
    resource_label_events: 'id, merge_request_id, label_id, user_id, action, created_at',
    resource_milestone_events: 'id, merge_request_id, milestone_id, user_id, action, state, created_at',
    resource_state_events: 'id, merge_request_id, user_id, state, source_commit, created_at',
  };
  const next = `${table}_next`;
  await sql
    .raw(`create table ${next} (id integer primary key autoincrement,
      merge_request_id integer references merge_requests (id) on delete cascade,
      issue_id integer references issues (id) on delete cascade,
      ${extra[table]} created_at text not null)`)
    .execute(db);
  await sql.raw(`insert into ${next} (${cols[table]}) select ${cols[table]} from ${table}`).execute(db);
  await sql.raw(`drop table ${table}`).execute(db);
  await sql.raw(`alter table ${next} rename to ${table}`).execute(db);
  await db.schema.createIndex(`${table}_mr`).on(table).columns(['merge_request_id', 'id']).execute();
}
