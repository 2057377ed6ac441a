// Project imports (GitLab lib/api/project_import.rb, Import::GitlabProjects::CreateProjectService,
// RepositoryImportWorker): from an uploaded file, a remote URL or an S3 object. The request creates the
// project (import_status scheduled) and stores or records the archive's source; the work runs as an
// outbox job (kind project_import): fetch, extract safely, restore the repository, apply project.json
// (override_params win), import the relations. Owner: the import part of issue 17.
import type { NamespaceRow, ProjectImportRow, ProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import type { ImportExportDeps } from '../deps.ts';

export interface ImportRequest {
  path: string;
  name?: string;
  /** id or full path; default the caller's namespace */
  namespace?: string;
  overwrite?: boolean;
  override_params?: Record<string, unknown>;
}

export interface RemoteImportRequest extends ImportRequest {
  url: string;
}

export interface S3ImportRequest extends ImportRequest {
  access_key_id: string;
  secret_access_key: string;
  bucket_name: string;
  file_key: string;
  region: string;
}

/** What the import-result record is made of. */
export interface ImportState {
  project: ProjectRow;
  namespace: NamespaceRow;
  state: ProjectImportRow | null;
}

export class ImportsService {
  constructor(readonly deps: ImportExportDeps) {}

  /** POST /projects/import: `file` is the spooled upload (a temporary file the service may move). */
  async importFile(_actor: Actor, _input: ImportRequest, _file: { path: string; size: number }): Promise<ImportState> {
    throw new Error('not implemented');
  }

  /** POST /projects/remote-import */
  async importRemote(_actor: Actor, _input: RemoteImportRequest): Promise<ImportState> {
    throw new Error('not implemented');
  }

  /** POST /projects/remote-import-s3 */
  async importS3(_actor: Actor, _input: S3ImportRequest): Promise<ImportState> {
    throw new Error('not implemented');
  }

  /** GET /projects/:id/import */
  async status(_actor: Actor, _idOrPath: string): Promise<ImportState> {
    throw new Error('not implemented');
  }

  /** The worker's round: runs queued imports; answers how many it ran. */
  async runQueued(): Promise<number> {
    return 0;
  }

  /** Resolves when the imports this process started are done (tests, shutdown). */
  async idle(): Promise<void> {}
}
