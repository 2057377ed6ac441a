// The layout of an export archive (GitLab's lib/gitlab/import_export.rb, ndjson format), a .tar.gz:
//   VERSION                          "0.2.4"
//   GITLAB_VERSION, GITLAB_REVISION  the server that wrote it
//   tree/project.json                the project's attributes (one JSON object)
//   tree/project/<relation>.ndjson   one JSON object per line (arrays); single-object relations are one
//                                    JSON without a trailing newline
//   project.bundle                   `git bundle` of every ref (absent for an empty repository)
export const EXPORT_VERSION = '0.2.4';
export const VERSION_FILE = 'VERSION';
export const GITLAB_VERSION_FILE = 'GITLAB_VERSION';
export const GITLAB_REVISION_FILE = 'GITLAB_REVISION';
export const TREE_DIR = 'tree';
export const PROJECT_JSON = 'tree/project.json';
export const RELATIONS_DIR = 'tree/project';
export const BUNDLE_FILE = 'project.bundle';

/** The relations POST /projects/import-relation takes. */
export const IMPORTABLE_RELATIONS = ['issues', 'milestones', 'ci_pipelines', 'merge_requests'] as const;
export type ImportableRelation = (typeof IMPORTABLE_RELATIONS)[number];

export const relationFile = (relation: string) => `${RELATIONS_DIR}/${relation}.ndjson`;

/**
 * The longest JSON document of an archive: a line of a relation file, or project.json (GitLab's
 * NdjsonReader::MAX_JSON_DOCUMENT_SIZE, 50 MB). Longer ones fail the import with jsonTooLarge's message,
 * while extracting (archive/extract.ts) and again while reading (tree/ndjson.ts), so that neither the
 * disk nor the memory of one string is spent on them.
 */
export const MAX_JSON_DOCUMENT_BYTES = 50 * 1024 * 1024;
export const jsonTooLarge = (file: string) => `JSON exceeds 50 MB limit in ${file}`;
/** The files of the tree held to that limit */
export const isJsonDocument = (name: string) => name.endsWith('.ndjson') || name.endsWith('.json');

/** One hard failure of an import, as GitLab's ImportFailure (failed_relations holds at most 100). */
export interface FailedRelation {
  id: number;
  created_at: string;
  exception_class: string;
  exception_message: string;
  source: string;
  relation_name: string;
  line_number: number;
}
