// POST /markdown (GitLab lib/api/markdown.rb): `text` required, `gfm` (GitLab Flavored Markdown),
// `project` (full path: the context of relative links; a project the caller cannot see is
// 404 Project Not Found) → 201 {"html": …}. With `gfm`, GitLab references (`#1`, `!2`, `~label`,
// `%milestone`, `@user`; without a project only `@user`) become links, those the caller may not read left
// as written. Anonymous callers may render, as on GitLab, at most
// HEARTH_MARKDOWN_RATE_LIMIT times a minute per address (check_rate_limit!'s 429 and Retry-After).
// The text renders off the event loop, within a time limit (domain/markdown/renderer.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { MAX_MARKDOWN_BYTES } from '../../domain/markdown/markdown.ts';
import { Errors } from '../../lib/errors.ts';
import { FixedWindowLimiter } from '../plugins/rate-limit.ts';

const Body = Type.Object({
  text: Type.String(),
  gfm: Type.Optional(Type.Boolean()),
  project: Type.Optional(Type.String()),
});

export function markdownRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const anonymousLimiter = new FixedWindowLimiter();
  app.post(
    '/api/v4/markdown',
    { config: { api: 'platform' }, schema: { tags: ['markdown'], body: Body, response: { 201: Type.Object({ html: Type.String() }) } } },
    async (req, reply) => {
      const limit = c.config.markdownRateLimit;
      if (limit > 0 && !req.actor.user) {
        const now = Date.now();
        const hit = anonymousLimiter.hit(`ip:${req.ip}`, limit, 60, now);
        if (!hit.allowed) {
          throw Errors.raw(
            429,
            { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
            { 'retry-after': String(Math.max(1, Math.ceil((hit.resetAt - now) / 1000))) },
          );
        }
      }
      const { text, gfm = false, project } = req.body;
      if (Buffer.byteLength(text) > MAX_MARKDOWN_BYTES) throw Errors.tooLarge();
      let context: { fullPath: string; defaultBranch: string } | null = null;
      if (project !== undefined && project !== '') {
        // Project.find_by_full_path: a path, not an id
        if (!project.includes('/')) throw Errors.notFound('Project');
        const p = await c.resolve.project(req.actor, project).catch((e) => {
          throw e instanceof Error && 'fullPath' in e ? Errors.notFound('Project') : e;
        });
        context = { fullPath: `${p.namespace.full_path}/${p.project.path}`, defaultBranch: p.project.default_branch ?? 'main' };
      }
      const html = await c.markdown.render(text, { gfm, externalUrl: c.config.externalUrl, project: context }, req.actor);
      return reply.code(201).send({ html });
    },
  );
}
