// override_params of the project imports (GitLab's `use :optional_project_params` under a Hash param):
// the project attributes an import may set, coerced as Grape coerces them (multipart fields arrive as
// strings), unknown keys dropped (declared_params), a bad value refused at request time with Grape's
// message. What is kept is applied over the archive's project.json (rule 4: overrides win).
import { Errors } from '../../../lib/errors.ts';
import { VISIBILITY_LEVELS } from '../../core/settings-definitions.ts';
import { FEATURES, LEGACY_FEATURE_FLAGS, PROJECT_SETTINGS, SETTING_ALIASES } from '../../core/project-settings.ts';

type Kind = 'boolean' | 'integer' | 'string' | 'string[]';
interface Param {
  kind: Kind;
  values?: readonly string[];
}

/**
 * optional_project_params: every attribute besides path and the create-only ones, and the name (which
 * wins over the request's `name`: override parameters always take precedence).
 */
const PARAMS: Record<string, Param> = (() => {
  const out: Record<string, Param> = {
    name: { kind: 'string' },
    description: { kind: 'string' },
    visibility: { kind: 'string', values: Object.keys(VISIBILITY_LEVELS) },
    topics: { kind: 'string[]' },
    tag_list: { kind: 'string[]' },
  };
  for (const flag of Object.keys(LEGACY_FEATURE_FLAGS)) out[flag] = { kind: 'boolean' };
  for (const [f, values] of Object.entries(FEATURES)) out[`${f}_access_level`] = { kind: 'string', values };
  for (const alias of Object.keys(SETTING_ALIASES)) out[alias] = { kind: 'boolean' };
  for (const [k, d] of Object.entries(PROJECT_SETTINGS)) if (!d.on) out[k] = { kind: d.kind, ...(d.values ? { values: d.values } : {}) };
  return out;
})();

const TRUE = new Set(['true', '1', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['false', '0', 'f', 'no', 'n', 'off']);

function coerce(p: Param, v: unknown): { ok: true; value: unknown } | { ok: false; enumFailure: boolean } {
  switch (p.kind) {
    case 'boolean':
      if (typeof v === 'boolean') return { ok: true, value: v };
      if (typeof v === 'string' && TRUE.has(v.toLowerCase())) return { ok: true, value: true };
      if (typeof v === 'string' && FALSE.has(v.toLowerCase())) return { ok: true, value: false };
      return { ok: false, enumFailure: false };
    case 'integer':
      if (typeof v === 'number' && Number.isInteger(v)) return { ok: true, value: v };
      if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) return { ok: true, value: Number(v.trim()) };
      return { ok: false, enumFailure: false };
    case 'string[]': {
      const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : null;
      if (!list || list.some((x) => typeof x !== 'string' && typeof x !== 'number')) return { ok: false, enumFailure: false };
      return { ok: true, value: list.map((x) => String(x).trim()).filter(Boolean) };
    }
    default: {
      if (typeof v !== 'string' && typeof v !== 'number') return { ok: false, enumFailure: false };
      const s = String(v);
      if (p.values && !p.values.includes(s)) return { ok: false, enumFailure: true };
      return { ok: true, value: s };
    }
  }
}

/**
 * override_params as given (a JSON object, or the `override_params[key]` fields of a multipart body
 * already gathered into one) → the known attributes, coerced. ApiError 400 `{"error": "..."}` as Grape
 * words a bad one: `override_params[visibility] does not have a valid value`, `… is invalid`.
 */
export function overrideParams(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw Errors.param('override_params is invalid');
  const out: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const p = Object.hasOwn(PARAMS, key) ? PARAMS[key] : undefined;
    if (!p || value === undefined) continue;
    if (value === null) {
      out[key] = null;
      continue;
    }
    const c = coerce(p, value);
    if (c.ok) out[key] = c.value;
    else errors.push(`override_params[${key}] ${c.enumFailure ? 'does not have a valid value' : 'is invalid'}`);
  }
  if (errors.length) throw Errors.param(errors.join(', '));
  return out;
}

/** The same coercion for untrusted values (the archive's project.json): what does not fit is dropped. */
export function lenientParams(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const p = Object.hasOwn(PARAMS, key) ? PARAMS[key] : undefined;
    if (!p || value === undefined || value === null) continue;
    const c = coerce(p, value);
    if (c.ok) out[key] = c.value;
  }
  return out;
}

/** The multipart fields `override_params[key]` (and `override_params[key][]`) as one object; null when none. */
export function overrideFromFields(fields: Record<string, string | string[]>): Record<string, unknown> | string | null {
  let out: Record<string, unknown> | null = null;
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'override_params') return Array.isArray(value) ? value.join(',') : value;
    const m = /^override_params\[([^\]]+)\](\[\])?$/.exec(name);
    if (!m) continue;
    out ??= {};
    out[m[1]!] = m[2] ? (Array.isArray(value) ? value : [value]) : Array.isArray(value) ? value[value.length - 1] : value;
  }
  return out;
}
