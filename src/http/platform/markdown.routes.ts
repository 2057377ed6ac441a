// POST /markdown (GitLab lib/api/markdown.rb): `text` required, `gfm` (GitLab Flavored Markdown),
// `project` (full path: the context of relative links; a project the caller cannot see is
// 404 Project Not Found) → 201 {"html": …}. Anonymous callers may render, as on GitLab.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { MAX_MARKDOWN_BYTES, renderMarkdown } from '../../domain/markdown/markdown.ts';
import { Errors } from '../../lib/errors.ts';

const Body = Type.Object({
  text: Type.String(),
  gfm: Type.Optional(Type.Boolean()),
  project: Type.Optional(Type.String()),
});

export function markdownRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/v4/markdown',
    { config: { api: 'platform' }, schema: { tags: ['markdown'], body: Body, response: { 201: Type.Object({ html: Type.String() }) } } },
    async (req, reply) => {
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
      const html = renderMarkdown(text, { gfm, externalUrl: c.config.externalUrl, project: context });
      return reply.code(201).send({ html });
    },
  );
}
