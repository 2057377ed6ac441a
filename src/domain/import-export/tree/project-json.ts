// tree/project.json (the project's own attributes) and the single-object relations project_feature and
// ci_cd_settings, in GitLab's names, from and to Hearth's project row and settings.
import fs from 'node:fs';
import path from 'node:path';
import type { ProjectRow } from '../../../db/schema.ts';
import { jsonTooLarge, MAX_JSON_DOCUMENT_BYTES } from '../archive/layout.ts';
import { FEATURES, PROJECT_SETTINGS, settingsOf, type Feature } from '../../core/project-settings.ts';
import type { ProjectAttributes } from '../../projects/projects.service.ts';
import { VISIBILITY_LEVELS, type VisibilityName } from '../../core/settings-definitions.ts';
import { PROJECT_JSON, RELATIONS_DIR } from '../archive/layout.ts';
import { TreeError } from './errors.ts';

/** ProjectFeature's stored levels. */
const FEATURE_LEVELS: Record<string, number> = { disabled: 0, private: 10, enabled: 20, public: 30 };
const FEATURE_NAMES = Object.fromEntries(Object.entries(FEATURE_LEVELS).map(([k, v]) => [v, k])) as Record<number, string>;
/** ProjectSetting.squash_options */
const SQUASH: Record<string, number> = { never: 0, always: 1, default_on: 2, default_off: 3 };
const SQUASH_NAMES = Object.fromEntries(Object.entries(SQUASH).map(([k, v]) => [v, k])) as Record<number, string>;

/** Settings GitLab leaves out of project.json (import_export.yml excluded_attributes) or keeps elsewhere. */
const NOT_IN_PROJECT_JSON = new Set([
  'lfs_enabled',
  'packages_enabled',
  'show_default_award_emojis',
  'max_artifacts_size',
  'merge_method',
  'public_jobs',
  'build_git_strategy',
  'squash_option',
  'group_runners_enabled',
]);

const visibilityName = (level: unknown): VisibilityName | undefined =>
  (Object.entries(VISIBILITY_LEVELS).find(([, v]) => v === level)?.[0] as VisibilityName | undefined) ?? undefined;

/** project.json's object. */
export function projectJson(project: ProjectRow, description: string | undefined): Record<string, unknown> {
  const s = settingsOf(project) as Record<string, unknown>;
  const out: Record<string, unknown> = {
    description: description ?? project.description,
    visibility_level: VISIBILITY_LEVELS[project.visibility as VisibilityName] ?? 0,
    archived: project.archived === 1,
    default_branch: project.default_branch,
    merge_requests_ff_only_enabled: s.merge_method === 'ff',
    merge_requests_rebase_enabled: s.merge_method === 'rebase_merge',
    public_builds: s.public_jobs,
    build_allow_git_fetch: s.build_git_strategy === 'fetch',
    squash_option: s.squash_option,
  };
  for (const [k, def] of Object.entries(PROJECT_SETTINGS)) {
    if (def.on === 'create' || NOT_IN_PROJECT_JSON.has(k)) continue;
    out[k] = s[k];
  }
  return out;
}

/** project_feature.ndjson's object (ProjectFeature's integer levels). */
export function projectFeatureJson(project: ProjectRow): Record<string, unknown> {
  const s = settingsOf(project) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of Object.keys(FEATURES)) out[`${f}_access_level`] = FEATURE_LEVELS[String(s[`${f}_access_level`])] ?? 20;
  return out;
}

export function ciCdSettingsJson(project: ProjectRow): Record<string, unknown> {
  const s = settingsOf(project) as Record<string, unknown>;
  return { group_runners_enabled: s.group_runners_enabled };
}

function readObject(file: string, required: boolean): Record<string, unknown> | null {
  let text: string;
  try {
    if (fs.statSync(file).size > MAX_JSON_DOCUMENT_BYTES + 1) throw new TreeError(jsonTooLarge(path.basename(file)));
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !required) return null;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TreeError(`${path.basename(file)} file not found`);
    throw e;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TreeError(`${path.basename(file)} is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (!required) return null;
    throw new TreeError(`${path.basename(file)} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** A value of the setting's kind, or undefined (a wrong type in an archive is left out, not an error). */
function settingValue(key: string, v: unknown): unknown {
  const def = PROJECT_SETTINGS[key];
  if (!def) return undefined;
  if (v === null) return def.nullable ? null : undefined;
  switch (def.kind) {
    case 'boolean':
      return typeof v === 'boolean' ? v : undefined;
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
    case 'string':
      if (typeof v !== 'string') return undefined;
      return def.values && !def.values.includes(v) ? undefined : v;
    default:
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  }
}

/** tree/project.json (+ project_feature, ci_cd_settings when present) as Hearth's project attributes. */
export function readProjectAttributes(dir: string): ProjectAttributes {
  const json = readObject(path.join(dir, PROJECT_JSON), true)!;
  const out: ProjectAttributes = {};
  if (typeof json.description === 'string' || json.description === null) out.description = (json.description as string | null) ?? '';
  const vis =
    visibilityName(json.visibility_level) ??
    (typeof json.visibility === 'string' ? visibilityName(VISIBILITY_LEVELS[json.visibility as VisibilityName]) : undefined);
  if (vis) out.visibility = vis;
  if (typeof json.default_branch === 'string' && json.default_branch !== '') out.default_branch = json.default_branch;
  for (const [k, def] of Object.entries(PROJECT_SETTINGS)) {
    if (def.on === 'create' || !(k in json)) continue;
    const v = settingValue(k, json[k]);
    if (v !== undefined) out[k] = v;
  }
  if (json.merge_requests_ff_only_enabled === true) out.merge_method = 'ff';
  else if (json.merge_requests_rebase_enabled === true) out.merge_method = 'rebase_merge';
  else if (json.merge_requests_ff_only_enabled === false || json.merge_requests_rebase_enabled === false) out.merge_method = 'merge';
  if (typeof json.merge_method === 'string' && ['ff', 'rebase_merge', 'merge'].includes(json.merge_method)) out.merge_method = json.merge_method;
  if (typeof json.public_builds === 'boolean') out.public_jobs = json.public_builds;
  if (typeof json.build_allow_git_fetch === 'boolean') out.build_git_strategy = json.build_allow_git_fetch ? 'fetch' : 'clone';
  const squash = typeof json.squash_option === 'number' ? SQUASH_NAMES[json.squash_option] : json.squash_option;
  if (typeof squash === 'string' && squash in SQUASH) out.squash_option = squash;
  const setting = json.project_setting;
  if (setting && typeof setting === 'object' && !Array.isArray(setting)) {
    const ps = setting as Record<string, unknown>;
    const sq = typeof ps.squash_option === 'number' ? SQUASH_NAMES[ps.squash_option] : ps.squash_option;
    if (typeof sq === 'string' && sq in SQUASH) out.squash_option = sq;
  }

  const feature =
    (json.project_feature as Record<string, unknown> | undefined) ?? readObject(path.join(dir, RELATIONS_DIR, 'project_feature.ndjson'), false) ?? undefined;
  if (feature && typeof feature === 'object') {
    for (const f of Object.keys(FEATURES) as Feature[]) {
      const level = feature[`${f}_access_level`];
      const name = typeof level === 'number' ? FEATURE_NAMES[level] : undefined;
      if (name && (FEATURES[f] as readonly string[]).includes(name)) out[`${f}_access_level`] = name;
    }
  }
  const ci =
    (json.ci_cd_settings as Record<string, unknown> | undefined) ?? readObject(path.join(dir, RELATIONS_DIR, 'ci_cd_settings.ndjson'), false) ?? undefined;
  if (ci && typeof ci === 'object' && typeof ci.group_runners_enabled === 'boolean') out.group_runners_enabled = ci.group_runners_enabled;
  return out;
}
