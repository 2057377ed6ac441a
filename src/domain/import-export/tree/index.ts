// The project's tree in an archive: tree/project.json and tree/project/<relation>.ndjson, written from
// the database and read back into it, in GitLab's attribute names (import_export.yml) so that the
// archives of either product carry over.
import type { Kysely } from 'kysely';
import type { Database, ProjectRow, UserRow } from '../../../db/schema.ts';
import type { FeatureDeps } from '../../deps.ts';
import type { ProjectAttributes } from '../../projects/projects.service.ts';
import type { FailedRelation, ImportableRelation } from '../archive/layout.ts';
import { clearTree as clear } from './clear.ts';
import { TreeError } from './errors.ts';
import { importTree as runImport } from './import.ts';
import { readProjectAttributes as readAttributes } from './project-json.ts';
import { writeTree as write, type TreeCounts } from './write.ts';

export type { TreeCounts };

/**
 * Writes `<dir>/tree/project.json` and `<dir>/tree/project/<relation>.ndjson` for the project, reading the
 * database page by page (bounded memory whatever the project's size). `description` replaces the
 * project's description in project.json (POST /projects/:id/export's `description`).
 */
export async function writeTree(deps: FeatureDeps, project: ProjectRow, dir: string, opts: { description?: string } = {}): Promise<TreeCounts> {
  return write(deps, project, dir, opts);
}

/**
 * `<dir>/tree/project.json` as project attributes Hearth takes on create/update (description,
 * visibility, default_branch, settings in ProjectAttributes' names). Throws TreeError when the file is
 * missing or is not a JSON object.
 */
export async function readProjectAttributes(dir: string): Promise<ProjectAttributes> {
  return readAttributes(dir);
}

export interface ImportTreeOptions {
  /** the project the relations go into (it exists; its repository is restored before) */
  project: ProjectRow;
  /** who imports: unmapped authors become this user (GitLab's MembersMapper) */
  importer: UserRow;
  /** only these relations (POST /projects/import-relation); default every relation of the archive */
  only?: ImportableRelation[];
  /** skip items already in the project (by iid or title): relation re-imports */
  skipExisting?: boolean;
}

export interface ImportTreeResult {
  counts: TreeCounts;
  /** items that could not be imported (the import still finishes), at most 100 kept */
  failed: FailedRelation[];
}

/**
 * Reads `<dir>/tree/project/*.ndjson` into the project: members mapped by email then username, labels,
 * milestones, merge requests with notes/approvals/award emoji/…, issues, ci_pipelines with jobs, … in
 * batches, each its own transaction. An item that fails is recorded in `failed` and skipped; a broken
 * archive (unparseable line structure, missing relation file when `only` names it) throws TreeError.
 */
export async function importTree(deps: FeatureDeps, dir: string, opts: ImportTreeOptions): Promise<ImportTreeResult> {
  return runImport(deps, dir, opts);
}

/** Removes every row importTree may have written for the project (a failed project import starts clean). */
export async function clearTree(trx: Kysely<Database>, projectId: number): Promise<void> {
  return clear(trx, projectId);
}

export { TreeError };
