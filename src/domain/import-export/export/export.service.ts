// Project exports (GitLab lib/api/project_export.rb, Projects::ImportExport::ExportService): the request,
// the status record, the download, the upload to `upload[url]`, and expiry. The work runs as an outbox
// job (kind project_export): this process starts it at once; the worker round takes what another
// process left. Owner: the export part of issue 17.
import type { NamespaceRow, ProjectExportRow, ProjectRow } from '../../../db/schema.ts';
import type { Readable } from 'node:stream';
import type { Actor } from '../../access/actor.ts';
import type { ImportExportDeps } from '../deps.ts';

export type ExportStatus = 'none' | 'queued' | 'started' | 'finished' | 'regeneration_in_progress' | 'failed';

export interface ExportRequest {
  description?: string;
  upload?: { url: string; http_method?: 'PUT' | 'POST' };
}

export class ExportsService {
  constructor(readonly deps: ImportExportDeps) {}

  /** POST /projects/:id/export (admin_project): queues an export of the project for the actor. */
  async request(_actor: Actor, _idOrPath: string, _input: ExportRequest): Promise<void> {
    throw new Error('not implemented');
  }

  /** GET /projects/:id/export: the project and the actor's export status. */
  async status(
    _actor: Actor,
    _idOrPath: string,
  ): Promise<{ project: ProjectRow; namespace: NamespaceRow; status: ExportStatus; row: ProjectExportRow | null }> {
    throw new Error('not implemented');
  }

  /** GET /projects/:id/export/download: the finished archive (or a redirect URL from the store). */
  async download(_actor: Actor, _idOrPath: string): Promise<{ fileName: string; size: number; stream: Readable | null; redirect: string | null }> {
    throw new Error('not implemented');
  }

  /** The worker's round: runs queued exports; answers how many it ran. */
  async runQueued(): Promise<number> {
    return 0;
  }

  /** The expiry sweep: expired archives leave the store; answers how many. */
  async removeExpired(): Promise<number> {
    return 0;
  }

  /** Resolves when the exports this process started are done (tests, shutdown). */
  async idle(): Promise<void> {}
}
