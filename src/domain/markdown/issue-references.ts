// The issues that markdown references read, in one place: finding them by project and iid (to link them,
// for any viewer) and which of them a viewer may read (to redact the others), the latter with the issue
// finder's rule (IssuesQuery#readable): an issue's `visibility` (its project's narrowed by the issues
// feature) or a membership of its project, and a confidential issue only for Reporters and up, its author,
// its assignees and administrators.
import type { Db } from '../../db/connect.ts';
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';

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

/** Who may read issues: the issue finder's condition on the row (IssuesQuery#readable). */
export interface IssueReadRule {
  readable(actor: Actor): Promise<(eb: ExpressionBuilder<Database, 'issues'>) => Expression<SqlBool>>;
}

/** Of these issue ids, those `actor` may read (one query, with the issue finder's rule). */
export async function readableIssues(db: Db, rule: IssueReadRule, actor: Actor, ids: readonly number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db.kysely
    .selectFrom('issues')
    .select('issues.id')
    .where('issues.id', 'in', [...new Set(ids)])
    .where(await rule.readable(actor))
    .execute();
  return new Set(rows.map((r) => r.id));
}
