// Single-relation imports (GitLab POST /projects/import-relation, Projects::ImportExport::RelationImportWorker):
// one relation of an export archive into an existing project, one at a time per project, items already
// there skipped. The work runs as an outbox job (kind relation_import). Owner: the relation-import part of issue 17.
import type { RelationImportRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import type { ImportableRelation } from '../archive/layout.ts';
import type { ImportExportDeps } from '../deps.ts';

export class RelationImportsService {
  constructor(readonly deps: ImportExportDeps) {}

  /** POST /projects/import-relation: `path` is the project's full path; `file` the spooled upload. */
  async request(
    _actor: Actor,
    _input: { path: string; relation: ImportableRelation },
    _file: { path: string; size: number },
  ): Promise<{ row: RelationImportRow; projectPath: string }> {
    throw new Error('not implemented');
  }

  /** GET /projects/:id/relation-imports */
  async list(_actor: Actor, _idOrPath: string): Promise<{ rows: RelationImportRow[]; projectPath: string }> {
    throw new Error('not implemented');
  }

  /** The worker's round. */
  async runQueued(): Promise<number> {
    return 0;
  }

  async idle(): Promise<void> {}
}
