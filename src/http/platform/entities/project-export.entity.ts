// GitLab's API::Entities::ProjectExportStatus (a ProjectIdentity plus export_status and, only when
// finished, _links). Owner: the export part of issue 17.
import { Type } from 'typebox';
import type { NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { ExportStatus } from '../../../domain/import-export/export/export.service.ts';

export const ProjectExportStatusSchema = Type.Object({
  id: Type.Integer(),
  description: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
  export_status: Type.String(),
  _links: Type.Optional(Type.Object({ api_url: Type.String(), web_url: Type.String() })),
});

export interface ProjectExportStatusEntity {
  id: number;
  description: string | null;
  name: string;
  name_with_namespace: string;
  path: string;
  path_with_namespace: string;
  created_at: string;
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
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: `${namespaceFullName} / ${project.name}`,
    path: project.path,
    path_with_namespace: fullPath,
    created_at: project.created_at,
    export_status: status,
    ...(status === 'finished'
      ? { _links: { api_url: `${externalUrl}/api/v4/projects/${project.id}/export/download`, web_url: `${externalUrl}/${fullPath}/download_export` } }
      : {}),
  };
}
