// `repository/` of projects, components and translations (reference §1.3) and the component `lock/`
// (§1.4). The component's mirror is the repository: Hearth commits nothing of its own yet, so there is
// never anything to commit or push, and `remote_commit` and `weblate_commit` are the mirrored head.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow } from '../../db/schema.ts';
import { canViewVcs, requireAdmin } from '../../domain/translation/access.ts';
import { MERGE_FAILURE_ACTIONS, REPOSITORY_ACTIONS } from '../../domain/translation/changes/actions.ts';
import { isoTime, commitTitle } from '../../git/objects.ts';
import { Errors } from '../../lib/errors.ts';
import { body, view, wireFor } from './common.ts';
import { sendJson } from './serializers.ts';

const OPERATIONS = [
  'commit',
  'pull',
  'pull-rebase',
  'pull-merge',
  'pull-merge-noff',
  'push',
  'reset',
  'reset-keep',
  'cleanup',
  'file-sync',
  'file-scan',
] as const;
const ALLOW_ACTION = 'GET, POST, HEAD, OPTIONS';
const PENDING = { total: 0, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: 0 };

type Level = 'project' | 'component' | 'translation';
type Params = { project: string; component?: string; language?: string };
const PATHS: Record<Level, string> = {
  project: '/api/projects/:project/',
  component: '/api/components/:project/:component/',
  translation: '/api/translations/:project/:component/:language/',
};

export function repositoryRoutesFor(app: FastifyInstance, c: Container, level: Level): void {
  const { queries: q, reads } = c.translation;

  /** the object and the components its repository operations act on */
  const target = async (req: FastifyRequest<{ Params: Params }>) => {
    const p = req.params;
    if (level === 'project') {
      return { components: await reads.repositoryComponents(req.actor, await q.project(req.actor, p.project)) };
    }
    if (level === 'component') return { components: [(await q.component(req.actor, p.project, p.component!)).component] };
    return { components: [(await q.translation(req.actor, p.project, p.component!, p.language!)).component] };
  };

  const commitInfo = async (component: ComponentRow) => {
    const commit = component.head ? await c.translation.vcs.mirror(component.id).commit(component.head) : null;
    if (!commit) return null;
    return {
      revision: commit.sha,
      shortrevision: commit.sha.slice(0, 7),
      author: `${commit.author.name} <${commit.author.email}>`,
      author_name: commit.author.name,
      author_email: commit.author.email,
      authordate: isoTime(commit.author.time, commit.author.tz).replace(/\.\d{3}/, ''),
      commit: `${commit.committer.name} <${commit.committer.email}>`,
      commit_name: commit.committer.name,
      commit_email: commit.committer.email,
      commitdate: isoTime(commit.committer.time, commit.committer.tz).replace(/\.\d{3}/, ''),
      message: commit.message,
      summary: commitTitle(commit.message),
    };
  };

  app.get<{ Params: Params }>(`${PATHS[level]}repository/`, view(ALLOW_ACTION, 'Repository'), async (req, reply) => {
    const { components } = await target(req);
    if (!canViewVcs(req.actor)) throw req.actor.user ? Errors.forbidden('You do not have permission to perform this action.') : Errors.unauthorized();
    const self = wireFor(c, req).api(req.url.split('?')[0]);
    if (level === 'project') {
      return sendJson(reply, {
        needs_commit: false,
        needs_merge: false,
        needs_push: false,
        url: self,
        remote_commit: null,
        weblate_commit: null,
        status: null,
        merge_failure: null,
        outgoing_commits: null,
        missing_commits: null,
        pending_units: PENDING,
      });
    }
    const component = components[0];
    const head = await commitInfo(component);
    const last = await reads.lastChange(component, REPOSITORY_ACTIONS);
    return sendJson(reply, {
      needs_commit: false,
      needs_merge: false,
      needs_push: false,
      url: self,
      remote_commit: head,
      weblate_commit: head,
      status: `On branch ${component.branch}\nYour branch is up to date with 'origin/${component.branch}'.\n\nnothing to commit, working tree clean\n`,
      merge_failure: last && MERGE_FAILURE_ACTIONS.has(last.action) ? last.target : null,
      outgoing_commits: 0,
      missing_commits: 0,
      pending_units: PENDING,
    });
  });

  app.post<{ Params: Params }>(`${PATHS[level]}repository/`, view(ALLOW_ACTION, 'Repository'), async (req, reply) => {
    const { components } = await target(req);
    // the body is validated before the permission is checked (reference §1.3)
    const op = body(req).operation;
    if (op === undefined || op === null || op === '') throw Errors.invalid({ operation: ['This field is required.'] });
    if (typeof op !== 'string' || !(OPERATIONS as readonly string[]).includes(op))
      throw Errors.invalid({ operation: [`"${String(op)}" is not a valid choice.`] });
    requireAdmin(req.actor, 'You do not have permission to perform this action.');
    if (op.startsWith('pull') || op.startsWith('reset') || op === 'file-scan') {
      for (const component of components) await c.translation.components.refresh(req.actor, component, op === 'file-scan' ? 'file-scan' : 'pull');
    }
    // commit, push, cleanup, file-sync: nothing is pending in Hearth, so there is nothing to do
    return sendJson(reply, { result: true });
  });

  if (level !== 'component') return;

  app.get<{ Params: Params }>(`${PATHS.component}lock/`, view(ALLOW_ACTION, 'Lock'), async (req, reply) => {
    const { component } = await q.component(req.actor, req.params.project, req.params.component!);
    return sendJson(reply, { locked: Boolean(component.locked) });
  });

  app.post<{ Params: Params }>(`${PATHS.component}lock/`, view(ALLOW_ACTION, 'Lock'), async (req, reply) => {
    const { project, component } = await q.component(req.actor, req.params.project, req.params.component!);
    const locked = await c.translation.components.setLock(req.actor, project, component, body(req));
    return sendJson(reply, { locked });
  });
}
