// `repository/` of projects, components and translations (reference §1.3) and the `lock/` of projects
// and components (§1.4). The status and the operations are the repository service's
// (domain/translation/repository/component-repository.ts); permissions are Weblate's vcs.* through
// the translation permissions. A translation's repository is its component's (a commit there commits
// that translation's pending edits only).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow, TranslationProjectRow, TranslationRow } from '../../db/schema.ts';
import { MERGE_FAILURE_ACTIONS, REPOSITORY_ACTIONS } from '../../domain/translation/changes/actions.ts';
import { OPERATIONS, type RepositoryOperation } from '../../domain/translation/repository/component-repository.ts';
import { OPERATION_DENIED, runOperation } from '../../domain/translation/repository/operations.ts';
import { Errors } from '../../lib/errors.ts';
import { body, view, wireFor } from './common.ts';
import { sendJson } from './serializers.ts';

const ALLOW_ACTION = 'GET, POST, HEAD, OPTIONS';

const DENIED = OPERATION_DENIED;

type Level = 'project' | 'component' | 'translation';
type Params = { project: string; component?: string; language?: string };
const PATHS: Record<Level, string> = {
  project: '/api/projects/:project/',
  component: '/api/components/:project/:component/',
  translation: '/api/translations/:project/:component/:language/',
};

export function repositoryRoutesFor(app: FastifyInstance, c: Container, level: Level): void {
  const { queries: q, reads } = c.translation;
  const { repository, permissions } = c.translation.writes;

  /** the object and the components its repository operations act on */
  const target = async (
    req: FastifyRequest<{ Params: Params }>,
  ): Promise<{ project: TranslationProjectRow; components: ComponentRow[]; translation?: TranslationRow }> => {
    const p = req.params;
    if (level === 'project') {
      const project = await q.project(req.actor, p.project);
      return { project, components: await reads.repositoryComponents(req.actor, project) };
    }
    if (level === 'component') {
      const { project, component } = await q.component(req.actor, p.project, p.component!);
      return { project, components: [component] };
    }
    const { project, component, translation } = await q.translation(req.actor, p.project, p.component!, p.language!);
    return { project, components: [component], translation };
  };

  /** DRF's IsAuthenticatedOrReadOnly runs before the view looks anything up: an anonymous write is 401 */
  const writer = (req: FastifyRequest) => {
    if (!req.actor.user) throw Errors.unauthorized();
  };

  app.get<{ Params: Params }>(`${PATHS[level]}repository/`, view(ALLOW_ACTION, 'Repository'), async (req, reply) => {
    const { project, components, translation } = await target(req);
    // the view raises Django's PermissionDenied: 403, anonymous callers included (reference §5.3)
    for (const component of components.length ? components : [undefined]) {
      if (!req.actor.user || !(await permissions.can(req.actor, 'vcs.view', { project, component }))) throw Errors.forbidden(DENIED);
    }
    const self = wireFor(c, req).api(req.url.split('?')[0]);
    if (level === 'project') {
      const statuses = [];
      for (const component of components) statuses.push(await repository.status(component));
      const pending = statuses.reduce((n, s) => n + s.pending_units.total, 0);
      return sendJson(reply, {
        needs_commit: statuses.some((s) => s.needs_commit),
        needs_merge: statuses.some((s) => s.needs_merge),
        needs_push: statuses.some((s) => s.needs_push),
        url: self,
        remote_commit: null,
        weblate_commit: null,
        status: null,
        merge_failure: null,
        outgoing_commits: null,
        missing_commits: null,
        pending_units: { total: pending, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: pending },
      });
    }
    const component = components[0];
    const s = await repository.status(component, { translationId: translation?.id });
    const last = await reads.lastChange(component, REPOSITORY_ACTIONS);
    return sendJson(reply, {
      needs_commit: s.needs_commit,
      needs_merge: s.needs_merge,
      needs_push: s.needs_push,
      url: self,
      remote_commit: s.remote_commit,
      weblate_commit: s.weblate_commit,
      status: s.status,
      merge_failure: last && MERGE_FAILURE_ACTIONS.has(last.action) ? last.target : null,
      outgoing_commits: s.outgoing_commits,
      missing_commits: s.missing_commits,
      pending_units: s.pending_units,
    });
  });

  app.post<{ Params: Params }>(`${PATHS[level]}repository/`, view(ALLOW_ACTION, 'Repository'), async (req, reply) => {
    writer(req);
    const { project, components, translation } = await target(req);
    // the body is validated before the permission is checked (reference §1.3)
    const op = body(req).operation;
    if (op === undefined || op === null || op === '') throw Errors.invalid({ operation: ['This field is required.'] });
    if (typeof op !== 'string' || !(OPERATIONS as readonly string[]).includes(op))
      throw Errors.invalid({ operation: [`"${typeof op === 'string' ? op : JSON.stringify(op)}" is not a valid choice.`] });
    const operation = op as RepositoryOperation;
    const done = await runOperation(permissions, repository, req.actor, operation, { project, components, translationId: translation?.id });
    return sendJson(reply, done);
  });

  if (level === 'translation') return;

  // lock/ (reference §1.4): anyone who sees the object reads it; changing it checks the permission
  // (component.lock, project.edit) before the body
  app.get<{ Params: Params }>(`${PATHS[level]}lock/`, view(ALLOW_ACTION, 'Lock'), async (req, reply) => {
    const { project, components } = await target(req);
    if (level === 'component') return sendJson(reply, { locked: Boolean(components[0].locked) });
    return sendJson(reply, { locked: await c.translation.components.projectLocked(project) });
  });

  app.post<{ Params: Params }>(`${PATHS[level]}lock/`, view(ALLOW_ACTION, 'Lock'), async (req, reply) => {
    writer(req);
    const { project, components } = await target(req);
    if (level === 'component') {
      await permissions.require(req.actor, 'component.lock', { project, component: components[0] }, DENIED);
      const locked = await c.translation.components.setLock(req.actor, project, components[0], body(req));
      return sendJson(reply, { locked });
    }
    await permissions.require(req.actor, 'project.edit', { project }, DENIED);
    const locked = await c.translation.components.setProjectLock(req.actor, project, body(req));
    return sendJson(reply, { locked });
  });
}
