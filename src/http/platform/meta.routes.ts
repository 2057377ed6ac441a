// Health probes, /version, /metadata and the OpenAPI document.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { ping } from '../../db/sql.ts';

const run = promisify(execFile);

async function check(fn: () => Promise<unknown>): Promise<{ status: 'ok' | 'failed'; message?: string }> {
  try {
    await fn();
    return { status: 'ok' };
  } catch (err) {
    return { status: 'failed', message: (err as Error).message.split('\n')[0] };
  }
}

const VersionSchema = Type.Object({ version: Type.String(), revision: Type.String() });
const MetadataSchema = Type.Object({
  version: Type.String(),
  revision: Type.String(),
  kas: Type.Object({
    enabled: Type.Boolean(),
    externalUrl: Type.Union([Type.String(), Type.Null()]),
    externalK8sProxyUrl: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
  }),
  enterprise: Type.Boolean(),
});

export function metaRoutes(app: FastifyInstance, c: Container): void {
  const probe = { api: 'health' as const };
  app.get('/-/health', { config: probe, schema: { hide: true } as any }, async (_req, reply) => reply.type('text/plain').send('Hearth OK'));
  app.get('/-/liveness', { config: probe, schema: { hide: true } as any }, async () => ({ status: 'ok' }));
  app.get('/-/readiness', { config: probe, schema: { hide: true } as any }, async (_req, reply) => {
    const [db, git] = await Promise.all([check(() => ping(c.db.kysely)), check(() => run('git', ['--version'], { timeout: 5000 }))]);
    const ok = db.status === 'ok' && git.status === 'ok';
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'failed', db_check: [db], git_check: [git] });
  });

  const authed = { api: 'platform' as const, auth: 'user' as const, scopes: ['read_user', 'ai_features'] };
  app.get('/api/v4/version', { config: authed, schema: { tags: ['meta'], response: { 200: VersionSchema } } }, async () => ({
    version: c.config.gitlabVersion,
    revision: c.config.revision,
  }));
  app.get('/api/v4/metadata', { config: authed, schema: { tags: ['meta'], response: { 200: MetadataSchema } } }, async () => ({
    version: c.config.gitlabVersion,
    revision: c.config.revision,
    kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
    enterprise: false,
  }));
  app.get('/api/v4/openapi.json', { config: { api: 'platform' }, schema: { hide: true } as any }, async (_req, reply) =>
    reply.type('application/json').send(JSON.stringify(app.swagger())),
  );
}
