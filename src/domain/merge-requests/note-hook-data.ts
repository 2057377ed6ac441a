// The note hook payload (Gitlab::DataBuilder::Note) of a note on a merge request, which embeds the merge
// request's own hook attributes.
import type { Kysely } from 'kysely';
import type { Database, NoteRow, UserRow } from '../../db/schema.ts';
import { projectHookAttrs, userHookAttrs } from '../core/hook-attrs.ts';
import { type HookDeps, mergeRequestHookPayload, projectWithNamespace } from './mr-events.ts';

/** The note hook payload (object_kind "note") of a note on a merge request. */
export async function noteHookData(
  trx: Kysely<Database>,
  deps: HookDeps,
  user: UserRow,
  note: NoteRow,
  action: 'create' | 'update' = 'create',
): Promise<({ object_kind: 'note' } & Record<string, unknown>) | null> {
  const target = await projectWithNamespace(trx, note.project_id);
  if (!target) return null;
  const project = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const mr =
    note.noteable_type === 'MergeRequest'
      ? await trx.selectFrom('merge_requests').selectAll().where('id', '=', note.noteable_id).executeTakeFirst()
      : undefined;
  const url = mr ? `${project.web_url}/-/merge_requests/${mr.iid}#note_${note.id}` : `${project.web_url}#note_${note.id}`;
  const data: { object_kind: 'note' } & Record<string, unknown> = {
    object_kind: 'note',
    event_type: note.internal ? 'confidential_note' : 'note',
    user: userHookAttrs(user),
    project_id: target.project.id,
    project,
    object_attributes: {
      attachment: null,
      author_id: note.author_id,
      change_position: null,
      commit_id: null,
      created_at: note.created_at,
      discussion_id: note.discussion_id,
      id: note.id,
      line_code: null,
      note: note.body,
      noteable_id: note.noteable_id,
      noteable_type: note.noteable_type,
      original_position: null,
      position: note.position ? (JSON.parse(note.position) as unknown) : null,
      project_id: note.project_id,
      resolved_at: note.resolved_at,
      resolved_by_id: note.resolved_by_id,
      resolved_by_push: null,
      st_diff: null,
      system: note.system === 1,
      type: note.type,
      updated_at: note.updated_at,
      updated_by_id: null,
      description: note.body,
      internal: note.internal === 1,
      url,
      action,
    },
    repository: { name: project.name, url: project.url, description: project.description, homepage: project.homepage },
  };
  if (mr) {
    const mrData = await mergeRequestHookPayload(trx, deps, user, mr, 'update');
    data.merge_request = mrData.object_attributes;
  }
  return data;
}
