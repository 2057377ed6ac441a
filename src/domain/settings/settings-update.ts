// PUT /application/settings: the one place that turns raw parameters (query, form, multipart or JSON,
// so strings or typed values) into setting values, with GitLab's two layers of errors:
//   1. Grape parameter validation → 400 {"error":"a is invalid, b does not have a valid value"}
//      (coercion, `values`, mutually_exclusive, given/requires, at_least_one_of);
//   2. ActiveRecord model validation of the resulting record → 400 {"message":{"attr":["msg"]}}.
// Nothing is written unless both pass.
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { isValidRefName } from '../../git/refs.ts';
import { chronicSeconds } from '../../lib/duration.ts';
import {
  ALIASES,
  BRANCH_ACCESS_LEVELS,
  IGNORED_PARAMS,
  MUTUALLY_EXCLUSIVE,
  REQUIRES,
  SETTINGS,
  STORAGES,
  settingNamed,
  VISIBILITY_LEVELS,
  type SettingDef,
  type SettingType,
  type Settings,
} from '../core/settings-definitions.ts';

export interface UpdateOptions {
  /** Group full path → id, for performance_bar_allowed_group_path. Unknown paths clear it, as in GitLab. */
  resolveGroupPath?: (path: string) => Promise<number | null>;
  /** Repository storage names of this instance (keys allowed in repository_storages_weighted). */
  storages?: readonly string[];
}

/** Parameters given as a group path although the setting holds the group id. */
export const GROUP_PATH_PARAMS = new Set(['performance_bar_allowed_group_id', 'performance_bar_allowed_group_path']);

/** Every parameter PUT accepts, alphabetically: the list in the "at least one" error. */
export const SETTABLE: readonly string[] = [...Object.keys(SETTINGS), ...Object.keys(ALIASES), ...Object.keys(IGNORED_PARAMS)].sort();

const accepted = (name: string): boolean => Object.hasOwn(SETTINGS, name) || Object.hasOwn(ALIASES, name) || Object.hasOwn(IGNORED_PARAMS, name);
const canonical = (name: string): string => ALIASES[name] ?? name;

function paramType(name: string): SettingType {
  if (GROUP_PATH_PARAMS.has(name)) return 'string';
  return IGNORED_PARAMS[name] ?? SETTINGS[canonical(name)].type;
}

// ---- coercion (Grape types) ----------------------------------------------------------------------

const INVALID = Symbol('invalid');
type Coerced = unknown | typeof INVALID;

const TRUE = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['0', 'false', 'f', 'no', 'n', 'off']);
const INTEGER_RE = /^[+-]?\d+$/;
const NUMBER_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);

function toBoolean(v: unknown): Coerced {
  if (v === null || typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v !== 'string') return INVALID;
  const l = v.trim().toLowerCase();
  if (l === '') return null;
  if (TRUE.has(l)) return true;
  if (FALSE.has(l)) return false;
  return INVALID;
}

/**
 * Grape's Integer, within what GitLab's integer columns hold (32 bits), as for every query and body
 * integer: `99999999999` is "<param> is invalid", never a stored value that no column can take.
 */
function toInteger(v: unknown): Coerced {
  if (v === null) return null;
  if (typeof v === 'number') return isInt32(v) ? v : INVALID;
  if (typeof v !== 'string') return INVALID;
  const s = v.trim();
  if (s === '') return null; // Grape: an empty value is nil
  if (!INTEGER_RE.test(s)) return INVALID;
  const n = Number(s);
  return isInt32(n) ? n : INVALID;
}

function toNumber(v: unknown): Coerced {
  if (v === null) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : INVALID;
  if (typeof v !== 'string') return INVALID;
  const s = v.trim();
  if (s === '') return null;
  if (!NUMBER_RE.test(s)) return INVALID;
  const n = Number(s);
  return Number.isFinite(n) ? n : INVALID;
}

/** PostgreSQL text cannot hold NUL: refused here too, whatever transport brought the value. */
const hasNul = (s: string): boolean => s.includes('\0');

function toStr(v: unknown): Coerced {
  if (typeof v === 'string') return hasNul(v) ? INVALID : v;
  if (v === null) return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return INVALID;
}

/** Array[String] with CommaSeparatedToArray: "a, b" → ["a","b"]; blank entries dropped. */
function toList(v: unknown): Coerced {
  if (v === null || v === undefined) return [];
  const out: string[] = [];
  for (const item of Array.isArray(v) ? v : [v]) {
    if (typeof item === 'number') out.push(String(item));
    else if (typeof item === 'string' && !hasNul(item))
      out.push(
        ...item
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    else return INVALID;
  }
  return out;
}

const SCALAR: Record<Exclude<SettingType, 'hash'>, (v: unknown) => Coerced> = {
  boolean: toBoolean,
  integer: toInteger,
  number: toNumber,
  string: toStr,
  array: toList,
};

/** default_branch_protection_defaults: a hash with nested Grape params (names like a[b][0][c]). */
function toBranchProtection(name: string, v: unknown, errors: string[]): Coerced {
  if (!isObject(v)) {
    errors.push(`${name} is invalid`);
    return INVALID;
  }
  const out: Record<string, unknown> = {};
  let ok = true;
  for (const key of ['allowed_to_push', 'allow_force_push', 'allowed_to_merge', 'code_owner_approval_required', 'developer_can_initial_push']) {
    if (!Object.hasOwn(v, key)) continue;
    const raw = v[key];
    const pname = `${name}[${key}]`;
    if (!key.startsWith('allowed_to_')) {
      const b = toBoolean(raw);
      if (b === INVALID) {
        errors.push(`${pname} is invalid`);
        ok = false;
      } else if (b !== null) out[key] = b;
      continue;
    }
    // qs turns a[0][x]=1 into an array, but a sparse or large index into an object: take its values
    const items = Array.isArray(raw) ? raw : isObject(raw) ? Object.values(raw) : null;
    if (!items || !items.every(isObject)) {
      errors.push(`${pname} is invalid`);
      ok = false;
      continue;
    }
    const levels: { access_level: number }[] = [];
    items.forEach((item, i) => {
      const iname = `${pname}[${i}][access_level]`;
      if (!Object.hasOwn(item, 'access_level')) {
        errors.push(`${iname} is missing`);
        ok = false;
        return;
      }
      const level = toInteger(item.access_level);
      if (level === INVALID || level === null) {
        errors.push(`${iname} is invalid`);
        ok = false;
      } else if (!BRANCH_ACCESS_LEVELS.includes(level as (typeof BRANCH_ACCESS_LEVELS)[number])) {
        errors.push(`${iname} does not have a valid value`);
        ok = false;
      } else levels.push({ access_level: level as number });
    });
    out[key] = levels;
  }
  return ok ? out : INVALID;
}

/** repository_storages_weighted: HashOfIntegerValues (every value must convert to an integer). */
function toWeights(name: string, v: unknown, errors: string[]): Coerced {
  const out: Record<string, number> = {};
  if (isObject(v)) {
    let ok = true;
    for (const [k, raw] of Object.entries(v)) {
      const n = toInteger(raw);
      if (n === INVALID || n === null) ok = false;
      else out[k] = n as number;
    }
    if (ok) return out;
  }
  errors.push(`${name} is invalid`);
  return INVALID;
}

/** One parameter: coercion, then Grape `values`. Errors are pushed in Grape's words. */
function coerceParam(name: string, raw: unknown, errors: string[]): Coerced {
  const target = canonical(name);
  if (target === 'default_branch_protection_defaults') return toBranchProtection(name, raw, errors);
  if (target === 'repository_storages_weighted') return toWeights(name, raw, errors);
  const value = SCALAR[paramType(name) as Exclude<SettingType, 'hash'>](raw);
  if (value === INVALID) {
    errors.push(`${name} is invalid`);
    return INVALID;
  }
  const allowed = Object.hasOwn(SETTINGS, target) && !GROUP_PATH_PARAMS.has(name) ? SETTINGS[target].values : undefined;
  const each = Array.isArray(value) ? value : [value];
  if (allowed && value !== null && !each.every((v) => allowed.includes(v as string | number))) {
    errors.push(`${name} does not have a valid value`);
    return INVALID;
  }
  return value;
}

// ---- model validation (ActiveRecord messages) ------------------------------------------------------

const blank = (v: unknown): boolean => v === null || v === undefined || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

function validUrl(s: string | null): boolean {
  if (s === null || /\s/.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const EMAIL_RE = /^[^@\s]+@[^@\s]+$/; // Devise.email_regexp
const TOKEN_PREFIX_RE = /^[a-zA-Z0-9_+=/@:.-]+$/;
const HTML_TAG_RE = /<\/?[a-z!?][^>]*>/i;

function numericErrors(def: SettingDef, v: number): string[] {
  const out: string[] = [];
  if (def.gt !== undefined && !(v > def.gt)) out.push(`must be greater than ${def.gt}`);
  if (def.gte !== undefined && !(v >= def.gte)) out.push(`must be greater than or equal to ${def.gte}`);
  if (def.lt !== undefined && !(v < def.lt)) out.push(`must be less than ${def.lt}`);
  if (def.lte !== undefined && !(v <= def.lte)) out.push(`must be less than or equal to ${def.lte}`);
  return out;
}

function regexError(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (err) {
    // "Invalid regular expression: /(/: Unterminated group" → "Unterminated group"
    const reason = (err as Error).message.split(': ').pop();
    return `not valid RE2 syntax: ${reason}`;
  }
}

/** QualifiedDomainArrayValidator. */
function domainErrors(list: unknown): string[] {
  if (!Array.isArray(list)) return ['entries cannot be nil'];
  const out: string[] = [];
  const entries = list.map(String);
  if (entries.some((e) => e.length > 255)) out.push('entries cannot be larger than 255 characters');
  if (!entries.every((e) => /^[\x00-\x7f]*$/.test(e))) out.push('unicode domains should use IDNA encoding');
  if (entries.some((e) => HTML_TAG_RE.test(e))) out.push('entries cannot contain HTML tags');
  return out;
}

const numericConstrained = (def: SettingDef): boolean => def.gt !== undefined || def.gte !== undefined || def.lt !== undefined || def.lte !== undefined;

/** Errors of one setting on its own. */
function fieldErrors(name: string, def: SettingDef, v: unknown): string[] {
  if (v === null || v === undefined) {
    if (def.nullable) return [];
    if (def.type === 'boolean') return ['must be a boolean value'];
    if ((def.type === 'integer' || def.type === 'number') && numericConstrained(def)) return ['is not a number'];
    return ["can't be blank"];
  }
  const out: string[] = [];
  if (typeof v === 'number') out.push(...numericErrors(def, v));
  if (def.inclusion && !def.inclusion.includes(v as string | number)) out.push('is not included in the list');
  if (typeof v === 'string' && def.maxLength !== undefined && v.length > def.maxLength) out.push(`is too long (maximum is ${def.maxLength} characters)`);
  if (typeof v === 'string' && v !== '') {
    switch (def.check) {
      case 'url':
        if (!validUrl(v)) out.push('must be a valid URL');
        break;
      case 'email':
        if (!EMAIL_RE.test(v)) out.push('is invalid');
        break;
      case 'regex': {
        const e = regexError(v);
        if (e) out.push(e);
        break;
      }
      case 'token_prefix':
        if (!TOKEN_PREFIX_RE.test(v)) out.push("can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'");
        if (v.length > 20) out.push('is too long (maximum is 20 characters)');
        break;
      case 'ci_config_path':
        if (/(\.{2}|^\/)/.test(v)) out.push('cannot include leading slash or directory traversal.');
        break;
      case 'duration':
        if (chronicSeconds(v) === null) out.push('is not a correct duration');
        break;
      case 'ref':
        if (!isValidRefName(v)) out.push('is invalid');
        break;
    }
  }
  if (def.check === 'domains') {
    if (name === 'outbound_local_requests_whitelist' && Array.isArray(v) && v.length > 1000) out.push('is too long (maximum is 1000 entries)');
    out.push(...domainErrors(v));
  }
  return out;
}

/** Validations that involve several settings or depend on an enable flag. */
function recordErrors(s: Settings, changed: Set<string>, storages: readonly string[], add: (attr: string, msg: string) => void): void {
  if (s.enforce_terms && blank(s.terms)) add('terms', 'You need to set terms to be enforced');
  if (s.domain_denylist_enabled && blank(s.domain_denylist)) add('domain_denylist', 'Domain denylist cannot be empty if denylist is enabled.');
  if (s.asset_proxy_enabled) {
    if (blank(s.asset_proxy_url)) add('asset_proxy_url', "can't be blank");
    else if (!validUrl(s.asset_proxy_url)) add('asset_proxy_url', 'must be a valid URL');
    if (blank(s.asset_proxy_secret_key)) add('asset_proxy_secret_key', "can't be blank");
  }
  if (s.external_authorization_service_enabled) {
    if (blank(s.external_authorization_service_default_label)) add('external_authorization_service_default_label', "can't be blank");
    if (!blank(s.external_authorization_service_url) && !validUrl(s.external_authorization_service_url))
      add('external_authorization_service_url', 'must be a valid URL');
    const timeout = s.external_authorization_service_timeout;
    if (timeout === null) add('external_authorization_service_timeout', 'is not a number');
    else for (const m of numericErrors({ type: 'number', default: null, gt: 0, lte: 10 }, timeout)) add('external_authorization_service_timeout', m);
  }
  const present: [string, string][] = [
    ['akismet_enabled', 'akismet_api_key'],
    ['recaptcha_enabled', 'recaptcha_site_key'],
    ['recaptcha_enabled', 'recaptcha_private_key'],
    ['plantuml_enabled', 'plantuml_url'],
    ['kroki_enabled', 'kroki_url'],
    ['diagramsnet_enabled', 'diagramsnet_url'],
  ];
  for (const [flag, attr] of present) if (settingNamed(s, flag) && blank(settingNamed(s, attr))) add(attr, "can't be blank");
  if (s.diagramsnet_enabled && !blank(s.diagramsnet_url) && !validUrl(s.diagramsnet_url)) add('diagramsnet_url', 'must be a valid URL');

  if (['default_project_visibility', 'default_group_visibility', 'restricted_visibility_levels'].some((k) => changed.has(k))) {
    for (const attr of ['default_project_visibility', 'default_group_visibility'] as const) {
      if ((s.restricted_visibility_levels as string[]).includes(s[attr])) add(attr, 'cannot be set to a restricted visibility level');
    }
  }

  const weights = s.repository_storages_weighted;
  const unknown = Object.keys(weights).filter((k) => !storages.includes(k));
  if (unknown.length) add('repository_storages_weighted', `can't include: ${unknown.join(', ')}`);
  for (const [storage, w] of Object.entries(weights)) {
    if (!Number.isInteger(w)) add('repository_storages_weighted', `value for '${storage}' must be an integer`);
    else if (w < 0 || w > 100) add('repository_storages_weighted', `value for '${storage}' must be between 0 and 100`);
  }
}

// ---- the update ----------------------------------------------------------------------------------

/**
 * Raw parameters + the current values → the changes to save (canonical names, stored forms).
 * Throws Errors.param (Grape) or Errors.invalid (model); unknown parameters are ignored.
 */
export async function prepareSettingsUpdate(params: Record<string, unknown>, current: Settings, opts: UpdateOptions = {}): Promise<Record<string, unknown>> {
  const given = Object.keys(params).filter(accepted);
  if (!given.length) {
    // Only parameters that are no settings: name them rather than list every setting.
    const unknown = Object.keys(params);
    if (unknown.length)
      throw Errors.param(`${unknown.join(', ')} ${unknown.length === 1 ? 'is not a setting' : 'are not settings'}, at least one setting must be provided`);
    throw Errors.param(`${SETTABLE.join(', ')} are missing, at least one parameter must be provided`);
  }
  const has = (name: string): boolean => given.includes(name);

  // 1. Grape: types and values, then the rules between parameters
  const errors: string[] = [];
  const coerced = new Map<string, unknown>();
  for (const name of given) {
    const v = coerceParam(name, params[name], errors);
    if (v !== INVALID) coerced.set(name, v);
  }
  for (const group of MUTUALLY_EXCLUSIVE) {
    const present = group.filter(has);
    if (present.length > 1) errors.push(`${present.join(', ')} are mutually exclusive`);
  }
  for (const [flag, required] of Object.entries(REQUIRES)) {
    if (coerced.get(flag) !== true) continue;
    for (const r of required) if (!has(r)) errors.push(`${r} is missing`);
  }
  if (coerced.get('housekeeping_enabled') === true) {
    const legacy = ['housekeeping_full_repack_period', 'housekeeping_gc_period', 'housekeeping_incremental_repack_period'];
    const n = legacy.filter(has).length;
    if (n > 0 && n < legacy.length) errors.push(`${legacy.join(', ')} provide all or none of parameters`);
    const period = ['housekeeping_incremental_repack_period', 'housekeeping_optimize_repository_period'];
    const p = period.filter(has).length;
    if (p === 0) errors.push(`${period.join(', ')} are missing, exactly one parameter must be provided`);
    if (p > 1) errors.push(`${period.join(', ')} are mutually exclusive`);
  }
  if (errors.length) throw Errors.param(errors.join(', '));

  // 2. legacy names → current names (a legacy name wins over the current one, as in lib/api/settings.rb)
  const changes: Record<string, unknown> = {};
  const ordered = [...coerced.keys()].sort((a, b) => Number(Object.hasOwn(ALIASES, a)) - Number(Object.hasOwn(ALIASES, b)));
  for (const name of ordered) {
    if (Object.hasOwn(IGNORED_PARAMS, name)) continue;
    changes[canonical(name)] = coerced.get(name);
  }

  // 3. the setters: stored forms
  const modelErrors: Record<string, string[]> = {};
  const add = (attr: string, msg: string): void => void (modelErrors[attr] ??= []).push(msg);
  if (Object.hasOwn(changes, 'terms')) {
    // ApplicationSettings::UpdateService#update_terms: blank terms leave the current ones
    const terms = typeof changes.terms === 'string' ? changes.terms.trim() : '';
    if (terms) changes.terms = terms;
    else delete changes.terms;
  }
  if (Object.hasOwn(changes, 'restricted_visibility_levels')) {
    const names: string[] = [];
    for (const level of changes.restricted_visibility_levels as string[]) {
      const name = visibilityName(level);
      if (!name) add('restricted_visibility_levels', `'${level}' is not a valid visibility level`);
      else if (!names.includes(name)) names.push(name);
    }
    changes.restricted_visibility_levels = names;
  }
  if (Object.hasOwn(changes, 'performance_bar_allowed_group_id')) {
    const path = changes.performance_bar_allowed_group_id as string | null;
    changes.performance_bar_allowed_group_id = path && path.trim() && opts.resolveGroupPath ? await opts.resolveGroupPath(path.trim()) : null;
  }

  // 4. the model: every setting of the resulting record, then the rules between settings
  const next = { ...current, ...changes } as Settings;
  for (const [name, def] of Object.entries(SETTINGS)) {
    if (name === 'restricted_visibility_levels' && modelErrors[name]) continue;
    for (const m of fieldErrors(name, def, settingNamed(next, name))) add(name, m);
  }
  recordErrors(next, new Set(Object.keys(changes)), opts.storages ?? STORAGES, add);
  if (Object.keys(modelErrors).length) throw Errors.invalid(modelErrors);
  return changes;
}

/** Gitlab::VisibilityLevel.level_value: a name or its integer level (0, 10, 20) → the name. */
function visibilityName(level: string): string | null {
  if (Object.hasOwn(VISIBILITY_LEVELS, level)) return level;
  const byValue = Object.entries(VISIBILITY_LEVELS).find(([, n]) => String(n) === level);
  return byValue ? byValue[0] : null;
}
