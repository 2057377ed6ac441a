// POST /projects/:id/housekeeping and GET /projects/:id/storage (GitLab's lib/api/projects.rb).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { HOUSEKEEPING_TASKS, type HousekeepingTask } from '../../domain/repository/housekeeping.ts';
import { RepositoryStore } from '../../git/storage.ts';
import { IdParams } from './schemas/common.ts';

const TAGS = ['projects'];
const HousekeepingBody = Type.Object({
  task: Type.Optional(Type.Unsafe<HousekeepingTask>({ type: 'string', enum: [...HOUSEKEEPING_TASKS], default: 'eager' })),
});

/** Entities::ProjectRepositoryStorage */
const StorageSchema = Type.Object({
  disk_path: Type.String(),
  project_id: Type.Integer(),
  repository_storage: Type.String(),
  created_at: Type.String(),
});

export function housekeepingRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  // authorize_admin_project; 409 while a housekeeping of the project is queued or running. The body is
  // the queued job's id, a JSON string, as Grape renders the worker's job id.
  app.post(
    '/api/v4/projects/:id/housekeeping',
    { config: { api: 'platform', auth: 'user' }, schema: { tags: TAGS, params: IdParams, body: Type.Optional(HousekeepingBody) } },
    async (req, reply) => {
      const jid = await c.housekeeping.request(req.actor, req.params.id, req.body?.task ?? 'eager');
      reply.code(201).type('application/json');
      return JSON.stringify(jid);
    },
  );

  // authenticated_as_admin!
  app.get(
    '/api/v4/projects/:id/storage',
    { config: { api: 'platform', auth: 'admin' }, schema: { tags: TAGS, params: IdParams, response: { 200: StorageSchema } } },
    async (req) => {
      const { project } = await c.resolve.project(req.actor, req.params.id);
      return {
        disk_path: RepositoryStore.diskPath(project.id).replace(/\.git$/, ''),
        project_id: project.id,
        repository_storage: project.repository_storage,
        created_at: project.created_at,
      };
    },
  );
}
