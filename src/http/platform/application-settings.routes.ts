// GET and PUT /application/settings (administrators only; reference §12).
import type { FastifyInstance } from 'fastify';
import qs from 'qs';
import { Type, type TSchema } from 'typebox';
import type { Container } from '../../container.ts';
import { ALIASES, IGNORED_PARAMS, SETTINGS, type SettingType } from '../../domain/core/settings-definitions.ts';
import { ApplicationSettingsSchema, toApplicationSettingsEntity } from './entities/application-settings.entity.ts';

const JSON_TYPES: Record<SettingType, string> = { integer: 'integer', number: 'number', boolean: 'boolean', string: 'string', array: 'array', hash: 'object' };

/**
 * For the OpenAPI document only: settings come from the query string or the body, as strings or typed
 * values, so coercion and validation happen in domain/settings/settings-update.ts, not in ajv.
 */
function updateBodySchema(): TSchema {
  const props: Record<string, TSchema> = {};
  const typeOf = (name: string): SettingType => IGNORED_PARAMS[name] ?? SETTINGS[ALIASES[name] ?? name].type;
  for (const name of [...Object.keys(SETTINGS), ...Object.keys(ALIASES), ...Object.keys(IGNORED_PARAMS)].sort()) {
    const type = typeOf(name);
    const schema: Record<string, unknown> = { type: JSON_TYPES[type] };
    if (type === 'array') schema.items = { type: 'string' };
    if (Object.hasOwn(ALIASES, name)) schema.description = `Deprecated: use ${ALIASES[name]}`;
    props[name] = Type.Optional(Type.Unsafe(schema));
  }
  return Type.Object(props, { additionalProperties: true });
}

const QS_OPTIONS = { arrayLimit: 1000, depth: 5, parameterLimit: 2000 } as const;

/** Multipart fields arrive flat ("a[b]" as one name): give them the nesting qs gives query and form fields. */
function multipartParams(body: Record<string, unknown>): Record<string, unknown> {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') search.append(k, String(item));
    }
  }
  return qs.parse(search.toString(), QS_OPTIONS) as Record<string, unknown>;
}

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) ? (v as Record<string, unknown>) : {};

export function settingsRoutes(app: FastifyInstance, c: Container): void {
  const config = { api: 'platform' as const, auth: 'admin' as const };
  const response = { 200: ApplicationSettingsSchema };

  // GitLab reads the row without the cache here (ApplicationSetting.find_or_create_without_cache).
  app.get('/api/v4/application/settings', { config, schema: { tags: ['settings'], response } }, async () =>
    toApplicationSettingsEntity(await c.settings.fresh(), c.repos.storageNames()),
  );

  app.put(
    '/api/v4/application/settings',
    {
      config,
      schema: { tags: ['settings'], body: updateBodySchema(), response },
      validatorCompiler: () => () => true,
    },
    async (req) => {
      const body = asObject(req.body);
      const fromBody = req.isMultipart() ? multipartParams(body) : body;
      const storages = c.repos.storageNames();
      const record = await c.settings.update({ ...asObject(req.query), ...fromBody }, { storages });
      return toApplicationSettingsEntity(record, storages);
    },
  );
}
