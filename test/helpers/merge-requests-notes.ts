// Shared preconditions of the notes, discussions, award emoji and approvals tests: a project with members
// and a merge request row inserted directly (these tests are about what hangs on a merge request).
import type { MergeRequestRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { nowIso } from '../../src/lib/time.ts';
import { EXTERNAL_URL, type TestApp } from './build-app.ts';

export const userBasic = (u: UserRow) => ({
  id: u.id,
  username: u.username,
  name: u.name,
  state: u.state,
  locked: false,
  avatar_url: null,
  web_url: `${EXTERNAL_URL}/${u.username}`,
});

export async function insertMergeRequest(
  c: TestApp['c'],
  project: ProjectRow,
  author: UserRow,
  attrs: Partial<{ iid: number; title: string; sha: string; discussion_locked: number; state: string }> = {},
): Promise<MergeRequestRow> {
  const at = nowIso();
  return c.db.kysely
    .insertInto('merge_requests')
    .values({
      iid: attrs.iid ?? 1,
      project_id: project.id,
      source_project_id: project.id,
      source_branch: 'feature',
      target_branch: 'main',
      title: attrs.title ?? 'Add a feature',
      description: 'What it does',
      state: attrs.state ?? 'opened',
      author_id: author.id,
      milestone_id: null,
      merge_user_id: null,
      closed_by_id: null,
      sha: attrs.sha ?? 'a'.repeat(40),
      diff_base_sha: null,
      merge_commit_sha: null,
      squash_commit_sha: null,
      merge_error: null,
      discussion_locked: attrs.discussion_locked ?? null,
      merged_at: null,
      closed_at: null,
      prepared_at: at,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function mrRow(c: TestApp['c'], id: number): Promise<MergeRequestRow> {
  return c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * A private project in a group with: owner (author of the MR, Developer), maintainer, developer, reporter,
 * guest, and an outsider; one merge request (iid 1).
 */
export async function world(t: TestApp) {
  const { seed, c } = t;
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  const author = await seed.user({ username: 'author' });
  const maintainer = await seed.user({ username: 'maint' });
  const developer = await seed.user({ username: 'dev' });
  const reporter = await seed.user({ username: 'rep' });
  const guest = await seed.user({ username: 'guest' });
  const outsider = await seed.user({ username: 'outsider' });
  await seed.member({ project }, author, 30);
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project }, developer, 30);
  await seed.member({ project }, reporter, 20);
  await seed.member({ project }, guest, 10);
  const mr = await insertMergeRequest(c, project, author);
  const h = async (u: UserRow) => (await seed.token(u)).headers;
  return {
    group,
    project,
    mr,
    users: { author, maintainer, developer, reporter, guest, outsider },
    headers: {
      author: await h(author),
      maintainer: await h(maintainer),
      developer: await h(developer),
      reporter: await h(reporter),
      guest: await h(guest),
      outsider: await h(outsider),
    },
    url: `/api/v4/projects/${project.id}/merge_requests/${mr.iid}`,
  };
}
