// Adding and removing translations (reference §1.7): POST /api/components/:p/:c/translations/
// {"language_code"} → 201 {"data": <translation without "component">}; DELETE /api/translations/:p/:c/:lang/
// → 204. The files change by commits on the component's branch (domain/translation/translations).
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { Errors } from '../../lib/errors.ts';
import { body, view, wireFor } from './common.ts';
import { ALLOW_LIST_RW } from './drf.ts';
import { sendJson } from './serializers.ts';

type C = { Params: { project: string; component: string } };
type T = { Params: { project: string; component: string; language: string } };

export function translationWritesRoutes(app: FastifyInstance, c: Container): void {
  const { queries: q, reads, writes } = c.translation;

  app.post<C>('/api/components/:project/:component/translations/', view(ALLOW_LIST_RW, 'Translations', 'Translation components API.'), async (req, reply) => {
    if (!req.actor.user) throw Errors.unauthorized();
    const { project, component } = await q.component(req.actor, req.params.project, req.params.component);
    const translation = await writes.translations.add(req.actor, project, component, body(req).language_code);
    const path = { project, component, translation, languageCode: '' };
    const wire = wireFor(c, req, await reads.translationRelated(path));
    return sendJson(reply, { data: wire.translation(project, component, translation, false) }, 201);
  });

  app.delete<T>(
    '/api/translations/:project/:component/:language/',
    view('GET, DELETE, HEAD, OPTIONS', 'Translation Instance', 'Translation components API.'),
    async (req, reply) => {
      if (!req.actor.user) throw Errors.unauthorized();
      const { project, component, translation } = await q.translation(req.actor, req.params.project, req.params.component, req.params.language);
      await writes.translations.remove(req.actor, project, component, translation);
      return reply.code(204).send();
    },
  );
}
