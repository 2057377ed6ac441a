// Rows → Weblate's JSON (reference §3): field order as Weblate's serializers write them, API links
// absolute from the request (with `format` kept), web links from EXTERNAL_URL. Pure: a `Wire` is made per
// request from the rows the domain loaded (domain/translation/related.ts) and whether the caller sees VCS
// fields (access.ts `canViewVcs`); it queries nothing and decides nothing.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentRow, TranslationChangeRow, TranslationProjectRow, TranslationRow } from '../../db/schema.ts';
import { ACTION_NAMES } from '../../domain/translation/changes/actions.ts';
import type { ChangeLinks, LanguageView, Related, UnitView } from '../../domain/translation/related.ts';
import { statisticsBody, sumCounts, type Counts } from '../../domain/translation/stats/stats.ts';
import { checksum } from '../../domain/translation/units/hash.ts';
import { apiUrl } from './drf.ts';

const enc = encodeURIComponent;

/** DRF DateTimeField: microseconds, `Z`, no fraction when it is zero. */
export function drfTime(iso: string | null): string | null {
  if (!iso) return null;
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso);
  if (!m) return iso;
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return /^0+$/.test(frac) ? `${m[1]}Z` : `${m[1]}.${frac}Z`;
}

// Signed 64-bit hashes go out as JSON numbers beyond 2^53: they are carried as BigInt and written raw.
const MARK = `\u0001${Math.random().toString(36).slice(2)}:`;
const MARKED = new RegExp(`"${MARK.replace('\u0001', '\\\\u0001')}(-?\\d+(?:\\.0)?)"`, 'g');
export function drfJson(value: unknown): string {
  // percentages are Python floats: 100.0, not 100
  const s = JSON.stringify(value, (k, v) =>
    typeof v === 'bigint' ? `${MARK}${v}` : typeof v === 'number' && k.endsWith('_percent') && Number.isInteger(v) ? `${MARK}${v}.0` : v,
  );
  return s
    .replace(MARKED, '$1')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
export function sendJson(reply: FastifyReply, value: unknown, status = 200): FastifyReply {
  return reply.code(status).type('application/json').send(drfJson(value));
}

const NOTHING: Related = { languages: new Map(), users: new Map(), projects: new Map(), components: new Map() };

export class Wire {
  private readonly languages = new Map<number, ReturnType<Wire['languageEntity']>>();

  /**
   * `site`: EXTERNAL_URL; `related`: the rows the objects serialized embed or link to; `vcs`: whether the
   * caller may see repository fields (hidden ones are null).
   */
  constructor(
    readonly req: FastifyRequest,
    readonly site: string,
    private readonly related: Related = NOTHING,
    private readonly vcs = false,
  ) {}

  api(path: string): string {
    return apiUrl(this.req, path);
  }

  languageEntity({ language: l, plural, aliases }: LanguageView) {
    return {
      id: l.id,
      code: l.code,
      name: l.name,
      plural,
      aliases,
      direction: l.direction,
      population: Number(l.population),
      web_url: `${this.site}/languages/${enc(l.code)}/`,
      url: this.api(`/api/languages/${enc(l.code)}/`),
      statistics_url: this.api(`/api/languages/${enc(l.code)}/statistics/`),
    };
  }

  language(id: number) {
    let l = this.languages.get(id);
    if (!l) {
      const view = this.related.languages.get(id);
      if (!view) throw new Error(`language ${id} was not loaded`);
      this.languages.set(id, (l = this.languageEntity(view)));
    }
    return l;
  }

  userUrl(id: number | null): string | null {
    const u = id === null ? undefined : this.related.users.get(id);
    return u ? this.api(`/api/users/${enc(u.username)}/`) : null;
  }
  userName(id: number | null): string | null {
    return (id !== null && this.related.users.get(id)?.name) || null;
  }

  projectRow(id: number): TranslationProjectRow {
    const p = this.related.projects.get(id);
    if (!p) throw new Error(`project ${id} was not loaded`);
    return p;
  }
  componentRow(id: number): ComponentRow {
    const c = this.related.components.get(id);
    if (!c) throw new Error(`component ${id} was not loaded`);
    return c;
  }

  project(p: TranslationProjectRow) {
    const base = `/api/projects/${enc(p.slug)}/`;
    return {
      name: p.name,
      slug: p.slug,
      id: p.id,
      web: p.web,
      source_language: this.language(p.source_language_id),
      web_url: `${this.site}/projects/${enc(p.slug)}/`,
      url: this.api(base),
      components_list_url: this.api(`${base}components/`),
      repository_url: this.api(`${base}repository/`),
      statistics_url: this.api(`${base}statistics/`),
      changes_list_url: this.api(`${base}changes/`),
      languages_url: this.api(`${base}languages/`),
      access_control: p.access_control,
    };
  }

  /** `withProject` false inside a project's components list (Weblate removes the key there). */
  component(p: TranslationProjectRow, c: ComponentRow, withProject = true) {
    const base = `/api/components/${enc(p.slug)}/${enc(c.slug)}/`;
    const vcs = this.vcs;
    const hidden = <T>(v: T) => (vcs ? v : null);
    return {
      name: c.name,
      slug: c.slug,
      id: c.id,
      source_language: this.language(c.source_language_id),
      ...(withProject ? { project: this.project(p) } : {}),
      vcs: hidden(c.vcs),
      repo: hidden(stripCredentials(c.repo)),
      git_export: hidden(`${this.site}/git/${enc(p.slug)}/${enc(c.slug)}/`),
      branch: hidden(c.branch),
      filemask: hidden(c.filemask),
      template: c.template,
      edit_template: Boolean(c.edit_template),
      new_base: c.new_base,
      file_format: c.file_format,
      license: c.license,
      license_url: c.license_url,
      agreement: c.agreement,
      web_url: `${this.site}/projects/${enc(p.slug)}/${enc(c.slug)}/`,
      url: this.api(base),
      repository_url: this.api(`${base}repository/`),
      translations_url: this.api(`${base}translations/`),
      statistics_url: this.api(`${base}statistics/`),
      lock_url: this.api(`${base}lock/`),
      changes_list_url: this.api(`${base}changes/`),
      task_url: null,
      new_lang: c.new_lang,
      language_code_style: c.language_code_style,
      push: hidden(stripCredentials(c.push)),
      check_flags: c.check_flags,
      priority: c.priority,
      enforced_checks: jsonList(c.enforced_checks),
      restricted: Boolean(c.restricted),
      language_regex: c.language_regex,
      locked: Boolean(c.locked),
    };
  }

  /** `withComponent` false inside a component's translations list. */
  translation(p: TranslationProjectRow, c: ComponentRow, t: TranslationRow, withComponent = true) {
    const lang = this.language(t.language_id);
    const base = `/api/translations/${enc(p.slug)}/${enc(c.slug)}/${enc(lang.code)}/`;
    const pct = statisticsBody(counts(t));
    return {
      language: lang,
      ...(withComponent ? { component: this.component(p, c) } : {}),
      language_code: t.language_code,
      id: t.id,
      filename: t.filename,
      revision: t.revision,
      web_url: `${this.site}/projects/${enc(p.slug)}/${enc(c.slug)}/${enc(lang.code)}/`,
      share_url: `${this.site}/engage/${enc(p.slug)}/-/${enc(lang.code)}/`,
      translate_url: `${this.site}/translate/${enc(p.slug)}/${enc(c.slug)}/${enc(lang.code)}/`,
      url: this.api(base),
      is_template: Boolean(t.is_template),
      is_source: Boolean(t.is_source),
      total: t.total,
      total_words: t.total_words,
      translated: t.translated,
      translated_words: t.translated_words,
      translated_percent: pct.translated_percent,
      fuzzy: t.fuzzy,
      fuzzy_words: t.fuzzy_words,
      fuzzy_percent: pct.fuzzy_percent,
      failing_checks: t.failing,
      failing_checks_words: t.failing_words,
      failing_checks_percent: pct.failing_percent,
      have_suggestion: t.suggestions,
      have_comment: t.comments,
      last_change: drfTime(t.last_change),
      last_author: this.userName(t.last_author_id),
      repository_url: this.api(`${base}repository/`),
      file_url: this.api(`${base}file/`),
      statistics_url: this.api(`${base}statistics/`),
      changes_list_url: this.api(`${base}changes/`),
      units_list_url: this.api(`${base}units/`),
    };
  }

  /** The statistics of a translation (reference §3.9): the dict plus code, name, url, translate_url. */
  translationStatistics(p: TranslationProjectRow, c: ComponentRow, t: TranslationRow) {
    const lang = this.language(t.language_id);
    return {
      ...statisticsBody(counts(t)),
      code: lang.code,
      name: lang.name,
      url: `${this.site}/projects/${enc(p.slug)}/${enc(c.slug)}/${enc(lang.code)}/`,
      translate_url: `${this.site}/translate/${enc(p.slug)}/${enc(c.slug)}/${enc(lang.code)}/`,
      last_author: this.userName(t.last_author_id),
    };
  }

  /** `u.source_unit_id` (reads.ts, queries.ts) names its source unit; without it the unit links to itself. */
  unit(p: TranslationProjectRow, c: ComponentRow, languageCode: string, u: UnitView) {
    const base = `/api/translations/${enc(p.slug)}/${enc(c.slug)}/${enc(languageCode)}/`;
    return {
      translation: this.api(base),
      source: u.source,
      previous_source: u.previous_source,
      target: u.target,
      id_hash: BigInt(u.id_hash),
      content_hash: BigInt(u.content_hash),
      location: u.location,
      context: u.context,
      note: u.note,
      flags: u.flags,
      state: u.state,
      fuzzy: u.state >= 10 && u.state < 20,
      translated: u.state >= 20,
      approved: u.state === 30,
      position: u.position,
      has_suggestion: Boolean(u.has_suggestion),
      has_comment: Boolean(u.has_comment),
      has_failing_check: Boolean(u.has_failing_check),
      num_words: u.num_words,
      source_unit: this.api(`/api/units/${u.source_unit_id ?? u.id}/`),
      priority: u.priority,
      id: u.id,
      web_url: `${this.site}/translate/${enc(p.slug)}/${enc(c.slug)}/${enc(languageCode)}/?checksum=${checksum(BigInt(u.id_hash))}`,
      url: this.api(`/api/units/${u.id}/`),
      explanation: u.explanation,
      extra_flags: u.extra_flags,
      pending: Boolean(u.pending),
      timestamp: drfTime(u.timestamp),
      last_updated: drfTime(u.last_updated),
      language_code: languageCode,
    };
  }

  change(ch: TranslationChangeRow, paths: ChangeLinks) {
    const c = ch.component_id !== null ? paths.components.get(ch.component_id) : undefined;
    const t = ch.translation_id !== null ? paths.translations.get(ch.translation_id) : undefined;
    return {
      unit: ch.unit_id !== null && paths.units.has(ch.unit_id) ? this.api(`/api/units/${ch.unit_id}/`) : null,
      component: c ? this.api(`/api/components/${enc(c.project)}/${enc(c.slug)}/`) : null,
      translation: c && t ? this.api(`/api/translations/${enc(c.project)}/${enc(c.slug)}/${enc(t)}/`) : null,
      glossary_term: null,
      user: this.userUrl(ch.user_id),
      author: this.userUrl(ch.author_id),
      timestamp: drfTime(ch.timestamp),
      action: ch.action,
      target: ch.target,
      old: ch.old,
      details: JSON.parse(ch.details || '{}'),
      id: ch.id,
      action_name: ACTION_NAMES.get(ch.action) ?? String(ch.action),
      url: this.api(`/api/changes/${ch.id}/`),
    };
  }
}

export function counts(t: TranslationRow): Counts {
  return sumCounts([t]);
}

/** A JSON list stored as text (enforced_checks): the list, never the string; [] when it is not one. */
function jsonList(text: string): unknown[] {
  try {
    const v = JSON.parse(text || '[]');
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** Weblate's HIDE_REPO_CREDENTIALS: user:password@ is not shown. */
function stripCredentials(url: string): string {
  return url.replace(/^(https?:\/\/)[^/@]*@/i, '$1');
}
