// The note hook payload (Gitlab::DataBuilder::Note) of a note on a merge request or an issue, which embeds
// the noteable's own hook attributes (`merge_request`, `issue`), given by its feature.
import type { Kysely } from 'kysely';
import type { Database, NoteRow, UserRow } from '../../db/schema.ts';
import { projectHookAttrs, projectWithNamespace, userHookAttrs } from '../core/hook-attrs.ts';
import { NOTEABLE_PATH, NOTEABLE_TABLE, type NoteableHookAttrs, type NoteableType } from './noteable.ts';

const HOOK_KEY: Record<NoteableType, string> = { MergeRequest: 'merge_request', Issue: 'issue' };

/** The note hook payload (object_kind "note") of a note on a merge request or an issue. */
export async function noteHookData(
  trx: Kysely<Database>,
  deps: { externalUrl: string },
  user: UserRow,
  note: NoteRow,
  action: 'create' | 'update' = 'create',
  noteableAttrs?: NoteableHookAttrs,
): Promise<({ object_kind: 'note' } & Record<string, unknown>) | null> {
  const target = await projectWithNamespace(trx, note.project_id);
  if (!target) return null;
  const project = projectHookAttrs(deps.externalUrl, target.project, target.namespace);
  const type = note.noteable_type as NoteableType;
  const noteable = type in NOTEABLE_TABLE ? await noteableRow(trx, type, note.noteable_id) : undefined;
  const url = noteable ? `${project.web_url}/-/${NOTEABLE_PATH[type]}/${noteable.iid}#note_${note.id}` : `${project.web_url}#note_${note.id}`;
  const data: { object_kind: 'note' } & Record<string, unknown> = {
    object_kind: 'note',
    event_type: note.internal || noteable?.confidential === 1 ? 'confidential_note' : 'note',
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
  const attrs = noteable && noteableAttrs ? await noteableAttrs(trx, user, noteable.id) : null;
  if (attrs) data[HOOK_KEY[type]] = attrs;
  return data;
}

async function noteableRow(trx: Kysely<Database>, type: NoteableType, id: number): Promise<{ id: number; iid: number; confidential: number } | undefined> {
  if (type === 'Issue') return trx.selectFrom('issues').select(['id', 'iid', 'confidential']).where('id', '=', id).executeTakeFirst();
  const mr = await trx.selectFrom(NOTEABLE_TABLE[type]).select(['id', 'iid']).where('id', '=', id).executeTakeFirst();
  return mr && { ...mr, confidential: 0 };
}
