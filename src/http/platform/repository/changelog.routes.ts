// Changelogs (GitLab lib/api/repositories.rb, app/services/repositories/changelog_service.rb):
// GET /projects/:id/repository/changelog returns a release section as notes, POST commits it into the
// changelog file. Generation errors are 422 {"message":"Failed to generate the changelog: …"}.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { DEFAULT_CONFIG_FILE } from '../../../domain/repository/changelog/config.ts';
import { ChangelogError } from '../../../domain/repository/changelog/error.ts';
import { releaseNotes, type ChangelogRequest } from '../../../domain/repository/changelog/service.ts';
import { nowReleaseDate, parseReleaseDate } from '../../../domain/repository/changelog/time.ts';
import { isSemverParam } from '../../../domain/repository/changelog/version.ts';
import { isSafePath } from '../../../git/command.ts';
import { Errors } from '../../../lib/errors.ts';

const DEFAULT_TRAILER = 'Changelog';
const DEFAULT_FILE = 'CHANGELOG.md';

// Grape's declaration order, which is the order of its error messages.
const RELEASE_PARAMS = ['version', 'from', 'to', 'date', 'trailer'] as const;
const GET_PARAMS = [...RELEASE_PARAMS, 'config_file'] as const;
const POST_PARAMS = [...RELEASE_PARAMS, 'branch', 'config_file', 'file', 'message'] as const;

type ParamName = (typeof POST_PARAMS)[number];

interface ChangelogParams extends Omit<ChangelogRequest, 'to'> {
  to?: string;
  branch?: string;
  file: string;
  message?: string;
}

/**
 * Grape's validation of the declared parameters: strings (scalars are coerced, lists and hashes are
 * invalid), `version` required and a semantic version, `date` a date-time (blank: now). Every
 * problem in one 400, in declaration order.
 */
function readParams(raw: unknown, names: readonly ParamName[]): ChangelogParams {
  const input = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const errors: string[] = [];
  const v: Partial<Record<ParamName, string>> = {};
  let date = nowReleaseDate();
  for (const name of names) {
    const value = Object.hasOwn(input, name) ? input[name] : undefined;
    if (value === undefined || value === null) {
      if (name === 'version') errors.push('version is missing');
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      errors.push(`${name} is invalid`);
      continue;
    }
    const text = String(value);
    if (name === 'version' && !isSemverParam(text)) errors.push('version is invalid');
    else if (name === 'date' && text.trim() !== '') {
      const parsed = typeof value === 'string' ? parseReleaseDate(text) : null;
      if (parsed) date = parsed;
      else errors.push('date is invalid');
    } else if (name === 'file' && !isSafePath(text)) errors.push('file is invalid');
    v[name] = text;
  }
  if (errors.length) throw Errors.param(errors.join(', '));
  return {
    version: v.version!,
    from: v.from,
    to: v.to,
    date,
    trailer: v.trailer ?? DEFAULT_TRAILER,
    configFile: v.config_file || DEFAULT_CONFIG_FILE,
    branch: v.branch,
    file: v.file ?? DEFAULT_FILE,
    message: v.message,
  };
}

/** Gitlab::Changelog::Error → 422 */
async function generating<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ChangelogError) throw Errors.unprocessable(`Failed to generate the changelog: ${e.message}`);
    throw e;
  }
}

export function changelogRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const params = Type.Object({ id: Type.String() });
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };

  app.get('/api/v4/projects/:id/repository/changelog', { config: read, schema: { params } }, async (req) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const p = readParams(req.query, GET_PARAMS);
    const to = p.to ?? (ctx.project.default_branch || 'main');
    const notes = await generating(async () => releaseNotes(await c.repository.changelogRelease(ctx, req.actor, { ...p, to })));
    return { notes };
  });

  app.post('/api/v4/projects/:id/repository/changelog', { config: write, schema: { params } }, async (req, reply) => {
    const actor = req.actor;
    const ctx = await c.repository.context(actor, req.params.id);
    const p = readParams(req.body, POST_PARAMS);
    const branch = p.branch ?? (ctx.project.default_branch || 'main');
    if (!(await c.repository.canPushTo(ctx, actor, branch))) throw Errors.forbidden('You are not allowed to commit a changelog on this branch');
    await generating(async () => {
      const release = await c.repository.changelogRelease(ctx, actor, { ...p, to: p.to ?? branch });
      await c.repository.commitChangelog(ctx, actor, release, { branch, file: p.file, message: p.message ?? `Add changelog for version ${p.version}` });
    });
    // GitLab answers `status(200)` with no entity: no body and no content type
    return reply.code(200).send();
  });
}
