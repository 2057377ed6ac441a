// GitLab's HEAD fallback: when a project's default branch does not exist (the first push or commit of
// another branch into an empty repository), that branch becomes the default branch.
import type { Db } from '../../db/connect.ts';
import type { ProjectRow } from '../../db/schema.ts';
import type { Repository } from '../../git/repository.ts';

export async function adoptDefaultBranch(db: Db, project: ProjectRow, repo: Repository, created: string | null): Promise<ProjectRow> {
  const current = project.default_branch ?? 'main';
  if (!created || current === created || (await repo.branch(current))) return project;
  await repo.setHead(created);
  return (await db.kysely.updateTable('projects').set({ default_branch: created }).where('id', '=', project.id).returningAll().executeTakeFirst()) ?? project;
}
