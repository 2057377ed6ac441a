// What the project export/import services take: one object, so a new service is one line in the
// container, and `ie` lets one service call another (built together, filled in before the first request).
import type { Config } from '../../config.ts';
import type { Outbound } from '../../lib/outbound.ts';
import type { SecretBox } from '../../lib/secrets.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { FeatureDeps } from '../deps.ts';
import type { ProjectsService } from '../projects/projects.service.ts';
import type { ExportsService } from './export/export.service.ts';
import type { ImportsService } from './import/import.service.ts';
import type { RelationImportsService } from './import/relation-import.service.ts';

export interface ImportExport {
  /** POST/GET /projects/:id/export, the download, the upload to upload[url], expiry */
  exports: ExportsService;
  /** POST /projects/import, remote-import, remote-import-s3; GET /projects/:id/import; the import job */
  imports: ImportsService;
  /** POST /projects/import-relation, GET /projects/:id/relation-imports; their job */
  relationImports: RelationImportsService;
}

export interface ImportExportDeps extends FeatureDeps {
  config: Config;
  /** archives (finished exports, uploaded or fetched imports) live here */
  store: BlobStore;
  /** the one guarded client: export uploads, remote imports */
  outbound: Outbound;
  projects: ProjectsService;
  /** seals what must be read back later and is a secret (upload URLs, S3 credentials) */
  box: SecretBox;
  ie: ImportExport;
}
