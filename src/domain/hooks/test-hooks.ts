// The data of POST …/hooks/:hook_id/test/:trigger (TestHooks::ProjectService and
// Integrations::ProjectTestData): the newest object of the kind in the project, or GitLab's message
// saying what the project lacks. A group hook is tested with its group's first project.
import type { Kysely } from 'kysely';
import type { Database, UserRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import { mergeRequestHookPayload, mergeRequestNoteableAttrs } from '../merge-requests/mr-events.ts';
import { samplePushData } from '../repository/push-events.ts';
import { buildHookData, type HookDataDeps, HookRows, pipelineHookData } from '../ci/hook-data.ts';
import { noteHookData } from '../notes/note-hook-data.ts';
import type { HookParent } from './web-hooks.service.ts';

export type TestData = { payload: Record<string, unknown> } | { error: string };

const NOT_AVAILABLE = 'Testing not available for this hook';

/** What a test reads: the newest objects of the project, its repository, and the URLs payloads link to. */
export interface TestHookDeps extends HookDataDeps {
  kysely: Kysely<Database>;
}

export async function testHookData(deps: TestHookDeps, actor: Actor, parent: HookParent, trigger: string): Promise<TestData> {
  const k = deps.kysely;
  let target = parent.type === 'project' ? { project: parent.project, namespace: parent.namespace } : null;
  if (parent.type === 'group') {
    const project = await k.selectFrom('projects').selectAll().where('namespace_id', '=', parent.group.id).orderBy('id').executeTakeFirst();
    if (!project) return { error: NOT_AVAILABLE };
    target = { project, namespace: parent.group };
  }
  const { project, namespace } = target!;
  const user = actor.user as UserRow;
  const wrap = (payload: Record<string, unknown> | null, error: string): TestData => (payload ? { payload } : { error });
  switch (trigger) {
    case 'push_events':
    case 'tag_push_events': {
      const repo = deps.repos.repository(project);
      const data = repo.exists()
        ? await samplePushData({ externalUrl: deps.externalUrl, project, namespace, user, repo }, trigger === 'tag_push_events')
        : null;
      return wrap(data, 'Ensure the project has at least one commit.');
    }
    case 'note_events': {
      const note = await k.selectFrom('notes').selectAll().where('project_id', '=', project.id).orderBy('id', 'desc').executeTakeFirst();
      return wrap(note ? await noteHookData(k, deps, user, note, 'create', mergeRequestNoteableAttrs(deps)) : null, 'Ensure the project has notes.');
    }
    case 'merge_requests_events': {
      const mr = await k
        .selectFrom('merge_requests')
        .selectAll()
        .where('project_id', '=', project.id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst();
      return wrap(mr ? await mergeRequestHookPayload(k, deps, user, mr, 'open') : null, 'Ensure the project has merge requests.');
    }
    case 'job_events': {
      const build = await k.selectFrom('ci_builds').selectAll().where('project_id', '=', project.id).orderBy('id', 'desc').executeTakeFirst();
      return wrap(build ? await buildHookData(new HookRows(k), deps, build) : null, 'Ensure the project has CI jobs.');
    }
    case 'pipeline_events': {
      const pipeline = await k.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).orderBy('id', 'desc').executeTakeFirst();
      return wrap(pipeline ? await pipelineHookData(new HookRows(k), deps, pipeline) : null, 'Ensure the project has CI pipelines.');
    }
    case 'issues_events':
    case 'confidential_issues_events': {
      const issue = await k.selectFrom('issues').select('id').where('project_id', '=', project.id).executeTakeFirst();
      return { error: issue ? NOT_AVAILABLE : 'Ensure the project has issues.' };
    }
    case 'wiki_page_events':
      return { error: 'Ensure the wiki is enabled and has pages.' };
    case 'releases_events':
      return { error: 'Ensure the project has releases.' };
    case 'emoji_events': {
      const note = await k.selectFrom('notes').select('id').where('project_id', '=', project.id).executeTakeFirst();
      return { error: note ? NOT_AVAILABLE : 'Ensure the project has notes.' };
    }
    default:
      return { error: NOT_AVAILABLE };
  }
}
