import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Who may read a merge request, kept on the merge request itself: its project's visibility, narrowed by the
// project's merge_requests feature — 'disabled' when the feature is off, 'private' when only members of
// Reporter and up may read (a private project, or the feature set to private), else the project's
// visibility ('internal', 'public'). The global merge request list counts up to 10,001 rows for its
// X-Total header; with this column it tests each row where it stands instead of looking up its project
// (at 1.5M merge requests: 57 → see bench/README.md).
//
// Triggers keep it true whoever writes: a new merge request takes its project's, and a change of a
// project's visibility or feature settings rewrites its merge requests (only when the answer changes).

/** SQL: the merge request visibility of a project row `p` (both databases). */
const mergeRequestVisibility = (p: string) => `(case
  when ${p}.settings like '%"merge_requests_access_level":"disabled"%' then 'disabled'
  when ${p}.visibility = 'private' or ${p}.settings like '%"merge_requests_access_level":"private"%' then 'private'
  else ${p}.visibility end)`;

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('merge_requests')
    .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
    .execute();
  // rows of private projects keep the default: only the others are written (a join, not a lookup per row)
  await sql
    .raw(
      `update merge_requests set visibility = ${mergeRequestVisibility('p')} from projects p
        where p.id = merge_requests.project_id and ${mergeRequestVisibility('p')} <> 'private'`,
    )
    .execute(db);
  if (dialect === 'postgres') {
    await sql
      .raw(`create function merge_requests_visibility_of_project() returns trigger language plpgsql as $$
      begin
        new.visibility := coalesce((select ${mergeRequestVisibility('p')} from projects p where p.id = new.project_id), 'private');
        return new;
      end $$`)
      .execute(db);
    await sql
      .raw(`create trigger merge_requests_visibility before insert or update of project_id on merge_requests
        for each row execute function merge_requests_visibility_of_project()`)
      .execute(db);
    await sql
      .raw(`create function projects_visibility_to_merge_requests() returns trigger language plpgsql as $$
      begin
        update merge_requests set visibility = ${mergeRequestVisibility('new')} where project_id = new.id;
        return null;
      end $$`)
      .execute(db);
    await sql
      .raw(`create trigger projects_merge_request_visibility after update of visibility, settings on projects for each row
        when (${mergeRequestVisibility('old')} is distinct from ${mergeRequestVisibility('new')})
        execute function projects_visibility_to_merge_requests()`)
      .execute(db);
  } else {
    await sql
      .raw(`create trigger merge_requests_visibility after insert on merge_requests begin
        update merge_requests set visibility = coalesce((select ${mergeRequestVisibility('p')} from projects p
          where p.id = new.project_id), 'private') where id = new.id;
      end`)
      .execute(db);
    await sql
      .raw(`create trigger merge_requests_visibility_move after update of project_id on merge_requests begin
        update merge_requests set visibility = coalesce((select ${mergeRequestVisibility('p')} from projects p
          where p.id = new.project_id), 'private') where id = new.id;
      end`)
      .execute(db);
    await sql
      .raw(`create trigger projects_merge_request_visibility after update of visibility, settings on projects
        when ${mergeRequestVisibility('old')} is not ${mergeRequestVisibility('new')} begin
        update merge_requests set visibility = ${mergeRequestVisibility('new')} where project_id = new.id;
      end`)
      .execute(db);
  }
}
