// Project stars (GitLab's UsersStarProject, User#toggle_star, UsersStarProjectsFinder): star and unstar
// a project the caller may see, the starrers of a project (private profiles hidden but to themselves and
// administrators), and the set of projects a user starred (the `starred` filter and starred_projects).
import { sql, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Database, ProjectRow, UserRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import { BASIC_COLUMNS } from '../core/user-columns.ts';

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (ch) => '\\' + ch);

export class StarsService {
  constructor(readonly deps: Pick<FeatureDeps, 'db' | 'resolve'>) {}

  /** Whether `userId` starred the project. */
  async starred(userId: number, projectId: number): Promise<boolean> {
    const row = await this.deps.db.kysely
      .selectFrom('users_star_projects')
      .select('id')
      .where('user_id', '=', userId)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return !!row;
  }

  /**
   * POST …/star and …/unstar: the project (read_project, else 404) and whether anything changed
   * (GitLab answers 304 Not Modified when it was already starred, or not starred, respectively).
   */
  async toggle(actor: Actor, idOrPath: string, star: boolean): Promise<{ project: ProjectRow; changed: boolean }> {
    const me = actor.user!;
    const { project } = await this.deps.resolve.project(actor, idOrPath);
    const k = this.deps.db.kysely;
    if (star) {
      if (await this.starred(me.id, project.id)) return { project, changed: false };
      const now = nowIso();
      try {
        await k.insertInto('users_star_projects').values({ project_id: project.id, user_id: me.id, created_at: now, updated_at: now }).execute();
      } catch (e) {
        // a concurrent star of the same project by the same user
        if (isUniqueViolation(e)) return { project, changed: false };
        throw e;
      }
      return { project, changed: true };
    }
    const deleted = await k.deleteFrom('users_star_projects').where('user_id', '=', me.id).where('project_id', '=', project.id).executeTakeFirst();
    return { project, changed: Number(deleted.numDeletedRows) > 0 };
  }

  /** The project as it is now (its counts after a star or unstar); `project` itself when it is gone. */
  async reread(project: ProjectRow): Promise<ProjectRow> {
    return (await this.deps.db.kysely.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirst()) ?? project;
  }

  /** How many users starred each of these projects (the star_count of a page). */
  async counts(projectIds: number[]): Promise<Map<number, number>> {
    if (!projectIds.length) return new Map();
    const rows = await this.deps.db.kysely
      .selectFrom('users_star_projects')
      .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('project_id', 'in', projectIds)
      .groupBy('project_id')
      .execute();
    return new Map(rows.map((r) => [r.project_id, Number(r.n)]));
  }

  /**
   * UsersStarProjectsFinder: the starrers of `project` (users with a public profile, oneself, or anyone
   * for administrators), matching `search` (User.search: name or username containing it, or the exact
   * email; exact matches first, then by name). Rows: the user's basic columns and `starred_since`.
   */
  starrers(actor: Actor, project: ProjectRow, search?: string) {
    const k = this.deps.db.kysely;
    let q = k
      .selectFrom('users_star_projects')
      .innerJoin('users', 'users.id', 'users_star_projects.user_id')
      .select([...BASIC_COLUMNS, 'users_star_projects.created_at as starred_since', 'users_star_projects.id as star_id'])
      .where('users_star_projects.project_id', '=', project.id);
    if (!actor.isAdmin) {
      const me = actor.user?.id;
      q = q.where((eb) => (me === undefined ? eb('users.private_profile', '=', 0) : eb.or([eb('users.private_profile', '=', 0), eb('users.id', '=', me)])));
    }
    const s = search?.trim().toLowerCase();
    if (s) {
      const pattern = `%${likeEscape(s)}%`;
      q = q
        .where(sql<SqlBool>`(lower(users.name) like ${pattern} escape '\\' or lower(users.username) like ${pattern} escape '\\' or lower(users.email) = ${s})`)
        .orderBy(sql`case when lower(users.name) = ${s} or lower(users.username) = ${s} or lower(users.email) = ${s} then 0 else 1 end`)
        .orderBy('users.name');
    }
    return q.orderBy('users_star_projects.id');
  }

  /** SQL: the ids of the projects `user` starred (for `starred=true` and /users/:id/starred_projects). */
  starredBy(userId: number): SelectQueryBuilder<Database, 'users_star_projects', { project_id: number }> {
    return this.deps.db.kysely.selectFrom('users_star_projects').select('users_star_projects.project_id').where('users_star_projects.user_id', '=', userId);
  }

  /** StarredProjectsFinder: a user's starred projects are hidden with their private profile. */
  static hidesStarred(actor: Actor, user: UserRow): boolean {
    return user.private_profile === 1 && !actor.isAdmin && actor.user?.id !== user.id;
  }
}
