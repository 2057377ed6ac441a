// GitLab's API::Entities::ProjectExportStatus (a ProjectIdentity plus export_status and, only when
// finished, _links).
import { Type } from 'typebox';
import type { NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { ExportStatus } from '../../../domain/import-export/export/export.service.ts';
import { ProjectIdentitySchema, toProjectIdentity, type ProjectIdentity } from './job.entity.ts';

export const ProjectExportStatusSchema = Type.Object({
  ...ProjectIdentitySchema.properties,
  export_status: Type.String(),
  _links: Type.Optional(Type.Object({ api_url: Type.String(), web_url: Type.String() })),
});

export interface ProjectExportStatusEntity extends ProjectIdentity {
  export_status: ExportStatus;
  _links?: { api_url: string; web_url: string };
}

/** `namespaceFullName`: the namespace's full name ("Group / Subgroup", or the owner's name). */
export function toProjectExportStatus(
  project: ProjectRow,
  namespace: NamespaceRow,
  namespaceFullName: string,
  status: ExportStatus,
  externalUrl: string,
): ProjectExportStatusEntity {
  const fullPath = `${namespace.full_path}/${project.path}`;
  return {
    ...toProjectIdentity(project, namespace, namespaceFullName),
    export_status: status,
    ...(status === 'finished'
      ? { _links: { api_url: `${externalUrl}/api/v4/projects/${project.id}/export/download`, web_url: `${externalUrl}/${fullPath}/download_export` } }
      : {}),
  };
}
