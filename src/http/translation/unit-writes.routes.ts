// Unit writes (reference §1.6, §3.7): PUT/PATCH/DELETE /api/units/:id/, POST …/translations/:p/:c/:lang/units/,
// and Hearth's own translation project members (GET/POST /api/projects/:slug/members/,
// DELETE /api/projects/:slug/members/:username/), which an administrator (or a `manage` member) keeps.
// DRF's order: authentication first (an anonymous write is 401 with WWW-Authenticate: Token, whatever
// the object), then the object (404), then validation (validators.ts) and permissions as the services do them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { Errors } from '../../lib/errors.ts';
import { body, view, wireFor } from './common.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RW, envelope, pageOf } from './drf.ts';
import { sendJson } from './serializers.ts';
import { newUnitRequest, unitWrite, validOrRefused } from './validators.ts';

const MEMBER_DETAIL = 'DELETE, OPTIONS';
const enc = encodeURIComponent;

function signedIn(req: FastifyRequest): void {
  if (!req.actor.user) throw Errors.unauthorized();
}

const unitId = (raw: string) => (/^\d+$/.test(raw) ? Number(raw) : Number.NaN);

export function unitWritesRoutes(app: FastifyInstance, c: Container): void {
  const t = c.translation;
  type U = { Params: { id: string } };
  const unitView = view(ALLOW_DETAIL_RW, 'Unit Instance', 'Units API.');

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route<U>({
      method,
      url: '/api/units/:id/',
      ...unitView,
      handler: async (req, reply) => {
        signedIn(req);
        const id = unitId(req.params.id);
        const write = await validOrRefused(unitWrite(body(req), method === 'PATCH'), () => t.queries.unit(req.actor, id, { sourceUnit: false }));
        const out = await t.writes.edits.update(req.actor, id, write);
        return sendJson(reply, out);
      },
    });
  }

  app.delete<U>('/api/units/:id/', unitView, async (req, reply) => {
    signedIn(req);
    await t.writes.edits.remove(req.actor, unitId(req.params.id));
    return reply.code(204).send();
  });

  type P = { Params: { project: string; component: string; language: string } };
  app.post<P>('/api/translations/:project/:component/:language/units/', view(ALLOW_LIST_RW, 'Units', 'Translation components API.'), async (req, reply) => {
    signedIn(req);
    const { project, component, language } = req.params;
    const out = await t.writes.edits.add(req.actor, { project, component, language }, newUnitRequest(body(req)));
    return sendJson(reply, wireFor(c, req).unit(out.project, out.component, out.languageCode, out.unit));
  });

  // members
  type M = { Params: { project: string } };
  const membersView = view(ALLOW_LIST_RW, 'Members', 'Translation project members (Hearth).');
  app.get<M>('/api/projects/:project/members/', membersView, async (req, reply) => {
    signedIn(req);
    const project = await t.queries.project(req.actor, req.params.project);
    const rows = await t.writes.permissions.members.list(req.actor, project);
    const page = pageOf(req, rows.length);
    return sendJson(
      reply,
      envelope(
        req,
        rows.length,
        page,
        rows.slice(page.offset, page.offset + page.size).map((m) => memberBody(req, m)),
      ),
    );
  });
  app.post<M>('/api/projects/:project/members/', membersView, async (req, reply) => {
    signedIn(req);
    const project = await t.queries.project(req.actor, req.params.project);
    const { member, created } = await t.writes.permissions.members.put(req.actor, project, body(req));
    return sendJson(reply, memberBody(req, member), created ? 201 : 200);
  });
  type MD = { Params: { project: string; username: string } };
  app.delete<MD>('/api/projects/:project/members/:username/', view(MEMBER_DETAIL, 'Member', 'Translation project members (Hearth).'), async (req, reply) => {
    signedIn(req);
    const project = await t.queries.project(req.actor, req.params.project);
    await t.writes.permissions.members.remove(req.actor, project, req.params.username);
    return reply.code(204).send();
  });
}

function memberBody(req: FastifyRequest, m: { username: string; role: string; created_at: string }) {
  return {
    username: m.username,
    role: m.role,
    user: `${req.protocol}://${req.host}/api/users/${enc(m.username)}/`,
    created_at: m.created_at,
  };
}
