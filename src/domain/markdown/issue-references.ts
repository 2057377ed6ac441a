// The issues that markdown references read, in one place: finding them by project and iid (to link them,
// for any viewer) and which of them a viewer may read (to redact the others). Both stand in for the issue
// tracker's finder and its read rule; when it exists, these two functions call it instead.
//
// Who may read an issue: its `visibility` (kept by triggers: the project's visibility narrowed by its
// issues feature) — public to everyone, internal to signed-in users who are not external, private to
// members of the project of any level (directly or through its groups) and administrators, disabled to
// nobody — and, for a confidential issue, only members of Reporter level and up, its author, its
// assignees and administrators.
import type { Db } from '../../db/connect.ts';
import type { Actor } from '../access/actor.ts';
import { openLevels, privateFeatureMinLevel } from '../access/visibility.ts';
import type { ProjectsQuery } from '../projects/projects-query.ts';

export interface ReferencedIssue {
  id: number;
  project_id: number;
  iid: number;
  title: string;
  issue_type: string;
}

/** The issues of these projects with these iids (one query for the whole text). */
export async function referencedIssues(db: Db, wanted: ReadonlyMap<number, ReadonlySet<number>>): Promise<ReferencedIssue[]> {
  const projectIds = [...wanted.keys()];
  const iids = [...new Set([...wanted.values()].flatMap((s) => [...s]))];
  if (!projectIds.length || !iids.length) return [];
  const rows = await db.kysely
    .selectFrom('issues')
    .select(['id', 'project_id', 'iid', 'title', 'issue_type'])
    .where('project_id', 'in', projectIds)
    .where('iid', 'in', iids)
    .execute();
  return rows.filter((r) => wanted.get(r.project_id)?.has(r.iid));
}

/** Of these issue ids, those `actor` may read (one query). */
export async function readableIssues(db: Db, projects: ProjectsQuery, actor: Actor, ids: readonly number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const user = actor.user;
  const open = openLevels(actor);
  let q = db.kysely
    .selectFrom('issues')
    .select('issues.id')
    .where('issues.id', 'in', [...new Set(ids)])
    .where('issues.visibility', '<>', 'disabled');
  if (actor.isAdmin) {
    // every issue of a feature that is not disabled, confidential or not
  } else if (!user) {
    q = q.where('issues.visibility', '=', 'public').where('issues.confidential', '=', 0);
  } else {
    const [guestsOf, reportersOf] = await Promise.all([
      projects.memberProjects(user.id, privateFeatureMinLevel('issues', 'private')),
      projects.memberProjects(user.id, 20),
    ]);
    // the member sets are conditions on `projects`: the issue's project is one of them
    const members = db.kysely.selectFrom('projects').select('projects.id').where(guestsOf);
    const reporters = db.kysely.selectFrom('projects').select('projects.id').where(reportersOf);
    q = q
      .where((eb) => eb.or([eb('issues.visibility', 'in', open), eb('issues.project_id', 'in', members)]))
      .where((eb) =>
        eb.or([
          eb('issues.confidential', '=', 0),
          eb('issues.author_id', '=', user.id),
          eb.exists(
            eb
              .selectFrom('issue_assignees')
              .select('issue_assignees.issue_id')
              .whereRef('issue_assignees.issue_id', '=', 'issues.id')
              .where('issue_assignees.user_id', '=', user.id),
          ),
          eb('issues.project_id', 'in', reporters),
        ]),
      );
  }
  const rows = await q.execute();
  return new Set(rows.map((r) => r.id));
}
