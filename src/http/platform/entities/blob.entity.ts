// API::Entities::Blob: a file a code search found (Search::FoundBlob). `filename` repeats `path` (GitLab
// renamed the field and kept both); `id` is the blob's for a file found by its path, null for a content match.
import { Type, type Static } from 'typebox';
import type { FoundBlob } from '../../../domain/repository/search.ts';
import { NullableString } from '../schemas/common.ts';

export const BlobSchema = Type.Object({
  basename: Type.String(),
  data: Type.String(),
  path: Type.String(),
  filename: Type.String(),
  id: NullableString,
  ref: Type.String(),
  startline: Type.Integer(),
  project_id: Type.Integer(),
});
export type BlobEntity = Static<typeof BlobSchema>;

export function toBlob(b: FoundBlob, projectId: number): BlobEntity {
  return { basename: b.basename, data: b.data, path: b.path, filename: b.path, id: b.id, ref: b.ref, startline: b.startline, project_id: projectId };
}
