// One translation (a component in one language): its statistics, the editor's filtered links, the `q`
// search box, the file's download (as stored and converted) and upload; the component's repository
// page; and the site search of units.
import type { CommitSummary, RepositoryStatus } from '../../../domain/translation/repository/component-repository.ts';
import type { ComponentRow, TranslationProjectRow, TranslationRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, FormErrors, Pagination, PostForm, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { FILTERS, SearchBox, type Stats, StatsSummary, urls } from './parts.tsx';

export const UPLOAD_METHOD_LABELS: Record<string, string> = {
  translate: 'Add as translation',
  suggest: 'Add as suggestion',
  approve: 'Add as approved translation',
  fuzzy: 'Add as translation needing edit',
  replace: 'Replace existing translation file',
};
export const CONFLICT_LABELS: Record<string, string> = {
  '': 'Change only untranslated strings',
  'replace-translated': 'Change translated strings',
  'replace-approved': 'Change translated and approved strings',
};
export const FUZZY_LABELS: Record<string, string> = {
  '': 'Do not import',
  process: 'Import as "Needing edit"',
  approve: 'Import as translated',
};

export interface UploadForm {
  /** the methods the viewer may use (empty: no upload form) */
  methods: string[];
  /** what was sent, kept when the form comes back with errors */
  values: { method?: string; conflicts?: string; fuzzy?: string };
  errors: string[] | null;
}

export function TranslationPage(p: {
  ctx: WebCtx;
  project: TranslationProjectRow;
  component: ComponentRow;
  translation: TranslationRow;
  languageName: string;
  stats: Stats;
  downloads: { format: string; label: string }[];
  upload: UploadForm;
}): SafeHtml {
  const { project, component, translation } = p;
  const lang = translation.language_code;
  const s = p.stats;
  const title = `${project.name} / ${component.name} — ${p.languageName}`;
  const editor = (q?: string) => urls.translate(project.slug, component.slug, lang, q);
  const filters: { text: string; count: number; q?: string }[] = [
    { text: 'All strings', count: s.total },
    { text: 'Untranslated strings', count: s.total - s.translated, q: FILTERS.untranslated },
    { text: 'Strings needing editing', count: s.fuzzy, q: FILTERS.needsEditing },
    { text: 'Strings with failing checks', count: s.failing, q: FILTERS.failing },
  ];
  return (
    <Layout
      ctx={p.ctx}
      title={title}
      crumbs={[
        { text: 'Projects', href: urls.projects() },
        { text: project.name, href: urls.project(project.slug) },
        { text: component.name, href: urls.component(project.slug, component.slug) },
        { text: p.languageName },
      ]}
    >
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">{title}</h1>
          <div class="Subhead-actions">
            <a class="btn btn-primary btn-sm" href={editor()}>
              Translate
            </a>
          </div>
        </div>
        <StatsSummary stats={s} />
        <p class="f6 color-fg-muted mb-3">
          Last change <TimeAgo at={translation.last_change} />
          {translation.filename ? (
            <>
              {' · '}File <code>{translation.filename}</code>
            </>
          ) : null}
        </p>
        <section aria-labelledby="strings-heading" class="mb-4">
          <h2 id="strings-heading" class="f3 mb-2">
            Strings
          </h2>
          <div class="Box mb-3">
            <ul>
              {filters.map((f) => (
                <li class="Box-row d-flex flex-items-center">
                  <a class="flex-auto" href={editor(f.q)}>
                    {f.text}
                  </a>
                  <span class="Counter" data-filter={f.q ?? 'all'}>
                    {f.count}
                  </span>
                </li>
              ))}
            </ul>
          </div>
          <form method="get" action={editor()} class="d-flex">
            <label for="translation-q" class="sr-only">
              Search strings in this translation
            </label>
            <input id="translation-q" class="form-control flex-1 mr-2" type="search" name="q" placeholder="source:hello state:<translated" />
            <button type="submit" class="btn">
              Search in the editor
            </button>
          </form>
        </section>
        <section aria-labelledby="files-heading" class="mb-4">
          <h2 id="files-heading" class="f3 mb-2">
            Files
          </h2>
          <div class="Box mb-3">
            <div class="Box-header">
              <h3 class="Box-title">Download</h3>
            </div>
            <ul>
              {p.downloads.map((d) => (
                <li class="Box-row">
                  <a href={urls.download(project.slug, component.slug, lang, d.format || undefined)} download>
                    {d.label}
                  </a>
                </li>
              ))}
            </ul>
          </div>
          {p.upload.methods.length ? <UploadBox {...p} /> : null}
        </section>
      </div>
    </Layout>
  );
}

function UploadBox(p: { ctx: WebCtx; project: TranslationProjectRow; component: ComponentRow; translation: TranslationRow; upload: UploadForm }): SafeHtml {
  const v = p.upload.values;
  const select = (id: string, name: string, label: string, options: [string, string][], current: string | undefined) => (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={id}>
        {label}
      </label>
      <select class="FormControl-select form-select" id={id} name={name}>
        {options.map(([value, text]) => (
          <option value={value} selected={value === (current ?? options[0]?.[0])}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <div class="Box" id="upload">
      <div class="Box-header">
        <h3 class="Box-title">Upload</h3>
      </div>
      <div class="Box-body">
        <FormErrors errors={p.upload.errors} />
        <PostForm ctx={p.ctx} action={urls.upload(p.project.slug, p.component.slug, p.translation.language_code)} multipart>
          <div class="FormControl mb-3">
            <label class="FormControl-label" for="upload-file">
              File
            </label>
            <input class="form-control" type="file" id="upload-file" name="file" required />
          </div>
          {select(
            'upload-method',
            'method',
            'File upload mode',
            p.upload.methods.map((m) => [m, UPLOAD_METHOD_LABELS[m] ?? m]),
            v.method,
          )}
          {select('upload-conflicts', 'conflicts', 'Processing of strings with existing translation', Object.entries(CONFLICT_LABELS), v.conflicts)}
          {select('upload-fuzzy', 'fuzzy', 'Processing of strings needing edit', Object.entries(FUZZY_LABELS), v.fuzzy)}
          <button type="submit" class="btn btn-primary">
            Upload
          </button>
        </PostForm>
      </div>
    </div>
  );
}

function Commit(p: { title: string; c: CommitSummary | null }): SafeHtml {
  return (
    <div class="Box-row">
      <h3 class="f5 mb-1">{p.title}</h3>
      {p.c ? (
        <p class="mb-0 f6">
          <code>{p.c.shortrevision}</code> {p.c.summary} <span class="color-fg-muted">by {p.c.author_name}</span> <TimeAgo at={p.c.commitdate} />
        </p>
      ) : (
        <p class="mb-0 f6 color-fg-muted">No commit.</p>
      )}
    </div>
  );
}

export interface RepositoryActions {
  commit: boolean;
  push: boolean;
  pull: boolean;
  lock: boolean;
}

export function RepositoryPage(p: {
  ctx: WebCtx;
  project: TranslationProjectRow;
  component: ComponentRow;
  status: RepositoryStatus;
  mergeFailure: string | null;
  can: RepositoryActions;
}): SafeHtml {
  const { project, component, status: s } = p;
  const op = (name: string) => urls.operation(project.slug, component.slug, name);
  const button = (name: string, text: string, primary = false) => (
    <PostForm ctx={p.ctx} action={op(name)} class="d-inline-block mr-2 mb-2">
      <button type="submit" class={primary ? 'btn btn-primary' : 'btn'}>
        {text}
      </button>
    </PostForm>
  );
  return (
    <Layout
      ctx={p.ctx}
      title={`Repository · ${component.name}`}
      crumbs={[
        { text: 'Projects', href: urls.projects() },
        { text: project.name, href: urls.project(project.slug) },
        { text: component.name, href: urls.component(project.slug, component.slug) },
        { text: 'Repository' },
      ]}
    >
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">Repository of {component.name}</h1>
        </div>
        <dl class="tr-summary d-flex flex-wrap mb-3">
          <div class="mr-4 mb-2">
            <dt class="f6 color-fg-muted">Pending changes</dt>
            <dd class="f3" data-stat="pending">
              {s.pending_units.total}
            </dd>
          </div>
          <div class="mr-4 mb-2">
            <dt class="f6 color-fg-muted">Outgoing commits</dt>
            <dd class="f3" data-stat="outgoing">
              {s.outgoing_commits}
            </dd>
          </div>
          <div class="mr-4 mb-2">
            <dt class="f6 color-fg-muted">Missing commits</dt>
            <dd class="f3" data-stat="missing">
              {s.missing_commits}
            </dd>
          </div>
          <div class="mr-4 mb-2">
            <dt class="f6 color-fg-muted">State</dt>
            <dd class="f3" data-stat="locked">
              {component.locked ? 'Locked' : 'Open'}
            </dd>
          </div>
        </dl>
        {p.mergeFailure ? (
          <div class="flash flash-error mb-3" role="alert">
            The last merge failed: {p.mergeFailure}
          </div>
        ) : null}
        <div class="mb-3">
          {p.can.commit ? button('commit', 'Commit', s.needs_commit) : null}
          {p.can.push ? button('push', 'Push', s.needs_push) : null}
          {p.can.pull ? button('pull', 'Pull', s.needs_merge) : null}
          {p.can.lock ? (component.locked ? button('unlock', 'Unlock') : button('lock', 'Lock')) : null}
        </div>
        <div class="Box mb-3">
          <Commit title="Last commit" c={s.weblate_commit} />
          <Commit title="Last remote commit" c={s.remote_commit} />
        </div>
        <details class="mb-3">
          <summary>Repository status</summary>
          <pre class="f6 p-2 color-bg-subtle">{s.status}</pre>
        </details>
      </div>
    </Layout>
  );
}

export interface SearchHit {
  id: number;
  source: string;
  target: string;
  context: string;
  project: string;
  component: string;
  componentName: string;
  language: string;
  href: string;
}

export function SearchPage(p: {
  ctx: WebCtx;
  q: string;
  total: number | null;
  hits: SearchHit[];
  page: number;
  hasNext: boolean;
  errors: string[] | null;
}): SafeHtml {
  const plural = (s: string) => s.split('\x1e').join(' / ');
  return (
    <Layout ctx={p.ctx} title={p.q ? `Search: ${p.q}` : 'Search'} crumbs={[{ text: 'Projects', href: urls.projects() }, { text: 'Search' }]}>
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">Search strings</h1>
        </div>
        <FormErrors errors={p.errors} />
        <SearchBox action={urls.search()} q={p.q} label="Search strings" id="site-search" />
        {p.total !== null ? (
          <p class="f6 color-fg-muted" data-stat="total">
            {p.total === 1 ? '1 string found' : `${p.total} strings found`}
          </p>
        ) : null}
        {p.total !== null && !p.hits.length ? <Blankslate title="No strings found" /> : null}
        {p.hits.length ? (
          <div class="Box mb-3 overflow-auto">
            <table class="tr-stats width-full">
              <caption class="sr-only">Matching strings</caption>
              <thead>
                <tr>
                  <th scope="col">Source</th>
                  <th scope="col">Translation</th>
                  <th scope="col">Where</th>
                </tr>
              </thead>
              <tbody>
                {p.hits.map((h) => (
                  <tr data-unit={h.id}>
                    <td>
                      <a href={h.href}>{plural(h.source) || '(empty)'}</a>
                      {h.context ? <div class="f6 color-fg-muted">{h.context}</div> : null}
                    </td>
                    <td>{plural(h.target)}</td>
                    <td class="f6">
                      {`${h.project} / ${h.componentName} `}
                      <code>{h.language}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
      </div>
    </Layout>
  );
}
