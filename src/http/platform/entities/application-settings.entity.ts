// Wire shape of GET/PUT /application/settings (GitLab's Entities::ApplicationSetting): id, timestamps,
// every returned setting of settings-definitions.ts and the legacy names that mirror a current one. The schema
// is generated from the same table, so the serializer keeps every setting and nothing else.
import { Type, type TSchema } from 'typebox';
import { RESPONSE_ALIASES, RESPONSE_CONSTANTS, SETTINGS, STORAGES, type SettingDef, settingNamed } from '../../../domain/core/settings-definitions.ts';
import type { SettingsRecord } from '../../../domain/settings/settings.service.ts';

const AccessLevels = Type.Array(Type.Object({ access_level: Type.Integer() }));

const HASHES: Record<string, TSchema> = {
  default_branch_protection_defaults: Type.Object({
    allowed_to_push: Type.Optional(AccessLevels),
    allow_force_push: Type.Optional(Type.Boolean()),
    allowed_to_merge: Type.Optional(AccessLevels),
    code_owner_approval_required: Type.Optional(Type.Boolean()),
    developer_can_initial_push: Type.Optional(Type.Boolean()),
  }),
  repository_storages_weighted: Type.Unsafe<Record<string, number>>({ type: 'object', additionalProperties: { type: 'integer' } }),
};

function schemaOf(name: string, def: SettingDef): TSchema {
  switch (def.type) {
    case 'hash':
      return HASHES[name];
    case 'array':
      return Type.Array(Type.String());
    default:
      // a type list, not anyOf: fast-json-stringify serialises it inline
      return def.nullable ? Type.Unsafe({ type: [def.type, 'null'] }) : Type.Unsafe({ type: def.type });
  }
}

/** Names of the response, alphabetically after id. */
function responseProps(): Record<string, TSchema> {
  const props: Record<string, TSchema> = {
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  };
  for (const [name, def] of Object.entries(SETTINGS)) if (!def.writeOnly) props[name] = schemaOf(name, def);
  for (const [alias, target] of Object.entries(RESPONSE_ALIASES)) props[alias] = schemaOf(target, SETTINGS[target]);
  for (const name of Object.keys(RESPONSE_CONSTANTS)) props[name] = Type.Boolean();
  const sorted: Record<string, TSchema> = { id: Type.Integer() };
  for (const k of Object.keys(props).sort()) sorted[k] = props[k];
  return sorted;
}

export const ApplicationSettingsSchema = Type.Object(responseProps());

export function toApplicationSettingsEntity(record: SettingsRecord, storages: readonly string[] = STORAGES): Record<string, unknown> {
  const v = record.values;
  const out: Record<string, unknown> = { id: record.id, created_at: record.created_at, updated_at: record.updated_at };
  for (const [name, def] of Object.entries(SETTINGS)) if (!def.writeOnly) out[name] = settingNamed(v, name);
  for (const [alias, target] of Object.entries(RESPONSE_ALIASES)) out[alias] = settingNamed(v, target);
  Object.assign(out, RESPONSE_CONSTANTS);
  // repository_storages_with_default_weight: every configured storage, 0 unless weighted
  const weights = v.repository_storages_weighted as Record<string, number>;
  out.repository_storages_weighted = Object.fromEntries(storages.map((s) => [s, weights[s] ?? 0]));
  return out;
}
