// Pieces the translation pages share: URLs of Weblate's web paths, the statistics of an object as
// the API computes them (statisticsBody), a progress bar of translated / needs editing / failing, and a
// table of statistics rows (components of a project, languages of a component …).
import type { WebCtx } from '../../context.ts';
import { type Counts, statisticsBody } from '../../../domain/translation/stats/stats.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';

const enc = encodeURIComponent;

export const urls = {
  projects: () => '/projects/',
  project: (p: string) => `/projects/${enc(p)}/`,
  projectLanguage: (p: string, lang: string) => `/projects/${enc(p)}/-/${enc(lang)}/`,
  component: (p: string, c: string) => `/projects/${enc(p)}/${enc(c)}/`,
  repository: (p: string, c: string) => `/projects/${enc(p)}/${enc(c)}/-/repository/`,
  translation: (p: string, c: string, lang: string) => `/projects/${enc(p)}/${enc(c)}/${enc(lang)}/`,
  /** the translation editor, filtered with `q` when given */
  translate: (p: string, c: string, lang: string, q?: string) => `/translate/${enc(p)}/${enc(c)}/${enc(lang)}/${q ? `?q=${enc(q)}` : ''}`,
  download: (p: string, c: string, lang: string, format?: string) => `/download/${enc(p)}/${enc(c)}/${enc(lang)}/${format ? `?format=${enc(format)}` : ''}`,
  componentZip: (p: string, c: string) => `/download/${enc(p)}/${enc(c)}/`,
  upload: (p: string, c: string, lang: string) => `/-/translation/${enc(p)}/${enc(c)}/${enc(lang)}/upload`,
  operation: (p: string, c: string, op: string) => `/-/translation/${enc(p)}/${enc(c)}/${op}`,
  languages: () => '/languages/',
  language: (code: string) => `/languages/${enc(code)}/`,
  search: (q?: string) => `/search/${q ? `?q=${enc(q)}` : ''}`,
};

/** The editor's filters (Weblate's): all, untranslated, needs editing, failing checks. */
export const FILTERS = {
  untranslated: 'state:<translated',
  needsEditing: 'state:>=needs-editing AND state:<translated',
  failing: 'has:check',
} as const;

export type Stats = ReturnType<typeof statisticsBody>;
export const statsOf = (c: Counts): Stats => statisticsBody(c);

/** One bar: translated (green), needs editing (yellow) and failing (red) as parts of the whole, with the figures as text. */
export function StatsBar(p: { stats: Stats; label: string }): SafeHtml {
  const s = p.stats;
  const width = (n: number) => (s.total ? Math.round((1000 * n) / s.total) / 10 : 0);
  return (
    <span class="d-inline-flex flex-items-center tr-bar">
      <span
        class="Progress"
        style="width:10rem"
        role="progressbar"
        aria-label={p.label}
        aria-valuenow={s.translated_percent}
        aria-valuemin="0"
        aria-valuemax="100"
      >
        <span class="Progress-item color-bg-success-emphasis" style={`width:${width(s.translated - Math.min(s.translated, s.failing))}%`} />
        <span class="Progress-item color-bg-danger-emphasis" style={`width:${width(Math.min(s.translated, s.failing))}%`} />
        <span class="Progress-item color-bg-attention-emphasis" style={`width:${width(s.fuzzy)}%`} />
      </span>
      <span class="ml-2 f6" data-stat="translated_percent">{`${s.translated_percent}%`}</span>
    </span>
  );
}

export interface StatsRow {
  key: string;
  /** the first cell: a link with the object's name */
  name: Child;
  stats: Stats;
  /** links into the editor, or null when the row has none (a project's component, a language) */
  translate?: { all: string; untranslated: string; needsEditing: string; failing: string } | null;
}

/** A table of statistics rows: translated %, strings, untranslated, needs editing, failing checks. */
export function StatsTable(p: { caption: string; first: string; rows: StatsRow[] }): SafeHtml {
  return (
    <div class="Box mb-4 overflow-auto">
      <table class="tr-stats width-full">
        <caption class="sr-only">{p.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{p.first}</th>
            <th scope="col">Translated</th>
            <th scope="col" class="text-right">
              Strings
            </th>
            <th scope="col" class="text-right">
              Untranslated
            </th>
            <th scope="col" class="text-right">
              Needs editing
            </th>
            <th scope="col" class="text-right">
              Failing checks
            </th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {p.rows.map((r) => {
            const s = r.stats;
            const t = r.translate;
            const untranslated = s.total - s.translated;
            return (
              <tr data-row={r.key}>
                <th scope="row">{r.name}</th>
                <td>
                  <StatsBar stats={s} label={`${r.key} translated`} />
                </td>
                <td class="text-right" data-stat="total">
                  {s.total}
                </td>
                <td class="text-right" data-stat="untranslated">
                  {t && untranslated ? <a href={t.untranslated}>{untranslated}</a> : untranslated}
                </td>
                <td class="text-right" data-stat="fuzzy">
                  {t && s.fuzzy ? <a href={t.needsEditing}>{s.fuzzy}</a> : s.fuzzy}
                </td>
                <td class="text-right" data-stat="failing">
                  {t && s.failing ? <a href={t.failing}>{s.failing}</a> : s.failing}
                </td>
                <td class="text-right">
                  {t ? (
                    <a class="btn btn-sm" href={t.all} aria-label={`Translate ${r.key}`}>
                      Translate
                    </a>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The editor's links of one translation. */
export function translateLinks(project: string, component: string, lang: string): StatsRow['translate'] {
  return {
    all: urls.translate(project, component, lang),
    untranslated: urls.translate(project, component, lang, FILTERS.untranslated),
    needsEditing: urls.translate(project, component, lang, FILTERS.needsEditing),
    failing: urls.translate(project, component, lang, FILTERS.failing),
  };
}

/** The summary figures of an object, as a definition list. */
export function StatsSummary(p: { stats: Stats }): SafeHtml {
  const s = p.stats;
  const items: [string, string, string | number][] = [
    ['translated_percent', 'Translated', `${s.translated_percent}%`],
    ['total', 'Strings', s.total],
    ['translated', 'Translated strings', s.translated],
    ['total_words', 'Words', s.total_words],
    ['translated_words_percent', 'Translated words', `${s.translated_words_percent}%`],
    ['fuzzy', 'Needs editing', s.fuzzy],
    ['failing', 'Failing checks', s.failing],
    ['approved', 'Approved', s.approved],
    ['suggestions', 'Suggestions', s.suggestions],
    ['comments', 'Comments', s.comments],
  ];
  return (
    <dl class="tr-summary d-flex flex-wrap mb-3">
      {items.map(([key, label, value]) => (
        <div class="mr-4 mb-2">
          <dt class="f6 color-fg-muted">{label}</dt>
          <dd class="f3" data-stat={key}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The search box of the `q` language. */
export function SearchBox(p: { action: string; q?: string; label: string; id: string }): SafeHtml {
  return (
    <form method="get" action={p.action} class="d-flex mb-3">
      <label for={p.id} class="sr-only">
        {p.label}
      </label>
      <input id={p.id} class="form-control flex-1 mr-2" type="search" name="q" value={p.q ?? ''} placeholder="state:<translated source:hello" />
      <button type="submit" class="btn">
        Search
      </button>
    </form>
  );
}

export type { WebCtx };
