// Avatars: the uploaded images of users, groups and projects served at GitLab's paths
// (/uploads/-/system/<model>/avatar/<id>/<file name>, UploadsController#show: user avatars to anyone,
// project and group avatars to those who may read them), and PUT /user/avatar. The `avatar` file of
// user, group and project create/update is read with `avatarFile` (schemas/avatar-file.ts).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { publicProfiles } from '../../domain/access/visibility.ts';
import type { AvatarModel } from '../../domain/avatars/avatars.service.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { avatarFile } from './schemas/avatar-file.ts';

/** UploadsController#cache_settings: expires_in 5 minutes, public for users, private and revalidated for projects and groups. */
const CACHE_CONTROL: Record<AvatarModel, string> = {
  user: 'max-age=300, public',
  group: 'max-age=300, private, must-revalidate',
  project: 'max-age=300, private, must-revalidate',
};

const Params = Type.Object({ model: Type.String(), id: Type.String(), filename: Type.String() });

export function avatarsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** May the actor see this model's avatar? (UploadsController#authorized?) */
  async function authorized(req: { actor: import('../../domain/access/actor.ts').Actor }, model: AvatarModel, id: number): Promise<boolean> {
    const actor = req.actor;
    if (model === 'user') {
      if (!(await c.users.byId(id))) return false;
      return publicProfiles(await c.settings.get(), actor);
    }
    if (model === 'project') {
      const found = await c.resolve.findProjectRow(id);
      if (!found || !('project' in found)) return false;
      return (await c.policy.project(actor, found.project, found.namespace)).abilities.has('read_project');
    }
    const found = await c.resolve.findGroupRow(id);
    if (!found || !('id' in found)) return false;
    return (await c.policy.group(actor, found)).abilities.has('read_group');
  }

  app.get(
    '/uploads/-/system/:model/avatar/:id/:filename',
    { config: { api: 'platform', auth: 'optional' }, schema: { hide: true, params: Params } },
    async (req, reply) => {
      const { model, id, filename } = req.params;
      if ((model !== 'user' && model !== 'group' && model !== 'project') || !/^\d+$/.test(id) || !isInt32(Number(id))) throw Errors.notFound();
      const ok = await authorized(req, model, Number(id));
      if (!ok) {
        // render_unauthorized: a signed-in caller gets 404, an anonymous one is sent to sign in
        if (req.actor.user) throw Errors.notFound();
        return reply.redirect(`${c.config.externalUrl}/users/sign_in`, 302);
      }
      const file = await c.avatars.open(model, Number(id), filename);
      if (!file) throw Errors.notFound();
      return reply
        .header('content-type', file.contentType)
        .header('content-length', file.size)
        .header('cache-control', CACHE_CONTROL[model])
        .header('content-disposition', `inline; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(filename)}`)
        .header('x-content-type-options', 'nosniff')
        .send(file.body);
    },
  );

  // PUT /user/avatar (lib/api/users.rb): the caller's own avatar → Entities::Avatar
  app.put(
    '/api/v4/user/avatar',
    {
      config: { api: 'platform', auth: 'user' },
      schema: {
        tags: ['users'],
        body: Type.Object({ avatar: Type.Unknown() }),
        response: { 200: Type.Object({ avatar_url: Type.Unsafe<string | null>({ type: ['string', 'null'] }) }) },
      },
    },
    async (req) => {
      const file = avatarFile(req.body.avatar);
      if (!file) throw Errors.param('avatar is missing');
      return { avatar_url: await c.avatars.save('user', req.actor.user!.id, file) };
    },
  );
}
