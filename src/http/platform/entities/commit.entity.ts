// The commit and diff shapes of GitLab's Entities::Commit and Entities::Diff (compare, commit diffs, merge
// request commits, changes, diffs and versions).
import { Type } from 'typebox';
import { NullableBoolean } from '../schemas/common.ts';

export const CommitSchema = Type.Object({
  id: Type.String(),
  short_id: Type.String(),
  created_at: Type.String(),
  parent_ids: Type.Array(Type.String()),
  title: Type.String(),
  message: Type.String(),
  author_name: Type.String(),
  author_email: Type.String(),
  authored_date: Type.String(),
  committer_name: Type.String(),
  committer_email: Type.String(),
  committed_date: Type.String(),
  trailers: Type.Record(Type.String(), Type.String()),
  extended_trailers: Type.Record(Type.String(), Type.Array(Type.String())),
  web_url: Type.String(),
});

export const DiffSchema = Type.Object({
  diff: Type.String(),
  collapsed: Type.Boolean(),
  too_large: Type.Boolean(),
  new_path: Type.String(),
  old_path: Type.String(),
  a_mode: Type.String(),
  b_mode: Type.String(),
  new_file: Type.Boolean(),
  renamed_file: Type.Boolean(),
  deleted_file: Type.Boolean(),
  generated_file: NullableBoolean,
});
