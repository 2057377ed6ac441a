// The overviews of Weblate's model: translation projects, a project (its components and languages), a
// project's language, a component (one row per language and its repository at a glance) and languages.
// Data comes from the routes (src/http/web/translation.pages.ts); these only render.
import type { ComponentRow, LanguageRow, TranslationProjectRow, TranslationRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Pagination } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { SearchBox, type Stats, StatsSummary, StatsTable, translateLinks, urls } from './parts.tsx';

export function ProjectsPage(p: { ctx: WebCtx; projects: { row: TranslationProjectRow; stats: Stats }[]; page: number; hasNext: boolean }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Projects" crumbs={[{ text: 'Projects' }]}>
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">Projects</h1>
          <div class="Subhead-actions">
            <a class="btn btn-sm mr-2" href={urls.languages()}>
              Languages
            </a>
            <a class="btn btn-sm" href={urls.search()}>
              Search strings
            </a>
          </div>
        </div>
        {p.projects.length ? (
          <StatsTable
            caption="Translation projects"
            first="Project"
            rows={p.projects.map(({ row, stats }) => ({ key: row.slug, name: <a href={urls.project(row.slug)}>{row.name}</a>, stats, translate: null }))}
          />
        ) : (
          <Blankslate title="No projects">
            <p>There are no translation projects you can see yet.</p>
          </Blankslate>
        )}
        <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
      </div>
    </Layout>
  );
}

export function ProjectPage(p: {
  ctx: WebCtx;
  project: TranslationProjectRow;
  stats: Stats;
  components: { row: ComponentRow; stats: Stats }[];
  languages: { code: string; name: string; stats: Stats }[];
  page: number;
  hasNext: boolean;
}): SafeHtml {
  const slug = p.project.slug;
  return (
    <Layout ctx={p.ctx} title={p.project.name} crumbs={[{ text: 'Projects', href: urls.projects() }, { text: p.project.name }]}>
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">{p.project.name}</h1>
          {p.project.web ? (
            <div class="Subhead-description">
              <a href={p.project.web} rel="nofollow noopener">
                {p.project.web}
              </a>
            </div>
          ) : null}
        </div>
        <StatsSummary stats={p.stats} />
        <h2 class="f3 mb-2">Components</h2>
        {p.components.length ? (
          <StatsTable
            caption={`Components of ${p.project.name}`}
            first="Component"
            rows={p.components.map(({ row, stats }) => ({
              key: row.slug,
              name: (
                <>
                  <a href={urls.component(slug, row.slug)}>{row.name}</a>
                  {row.locked ? <span class="Label ml-1">Locked</span> : null}
                </>
              ),
              stats,
              translate: null,
            }))}
          />
        ) : (
          <Blankslate title="No components">
            <p>This project has no components you can see.</p>
          </Blankslate>
        )}
        <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
        <h2 class="f3 mb-2">Languages</h2>
        {p.languages.length ? (
          <StatsTable
            caption={`Languages of ${p.project.name}`}
            first="Language"
            rows={p.languages.map((l) => ({ key: l.code, name: <a href={urls.projectLanguage(slug, l.code)}>{l.name}</a>, stats: l.stats, translate: null }))}
          />
        ) : (
          <p class="color-fg-muted">No translations yet.</p>
        )}
      </div>
    </Layout>
  );
}

/** A language's translations in one project (project-language) or across projects (language page). */
export function LanguageTranslationsPage(p: {
  ctx: WebCtx;
  language: LanguageRow;
  project: TranslationProjectRow | null;
  stats: Stats;
  rows: { project: TranslationProjectRow; component: ComponentRow; translation: TranslationRow; stats: Stats }[];
}): SafeHtml {
  const title = p.project ? `${p.project.name} — ${p.language.name}` : p.language.name;
  const crumbs = p.project
    ? [{ text: 'Projects', href: urls.projects() }, { text: p.project.name, href: urls.project(p.project.slug) }, { text: p.language.name }]
    : [{ text: 'Languages', href: urls.languages() }, { text: p.language.name }];
  return (
    <Layout ctx={p.ctx} title={title} crumbs={crumbs}>
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">{title}</h1>
          <div class="Subhead-description">
            <span class="color-fg-muted">Code</span> <code>{p.language.code}</code>
            {p.project ? (
              <>
                {' · '}
                <a href={urls.language(p.language.code)}>{`${p.language.name} in all projects`}</a>
              </>
            ) : null}
          </div>
        </div>
        <StatsSummary stats={p.stats} />
        {p.rows.length ? (
          <StatsTable
            caption={`Translations into ${p.language.name}`}
            first="Component"
            rows={p.rows.map((r) => ({
              key: `${r.project.slug}/${r.component.slug}`,
              name: (
                <a href={urls.translation(r.project.slug, r.component.slug, r.translation.language_code)}>
                  {p.project ? r.component.name : `${r.project.name} / ${r.component.name}`}
                </a>
              ),
              stats: r.stats,
              translate: translateLinks(r.project.slug, r.component.slug, r.translation.language_code),
            }))}
          />
        ) : (
          <Blankslate title="No translations">
            <p>Nothing is translated into this language where you can see it.</p>
          </Blankslate>
        )}
      </div>
    </Layout>
  );
}

export function ComponentPage(p: {
  ctx: WebCtx;
  project: TranslationProjectRow;
  component: ComponentRow;
  stats: Stats;
  /** the languages table (ComponentLanguages) */
  languages: SafeHtml;
  /** pending changes not yet committed, when the viewer may see the repository (else null) */
  repository: { pending: number } | null;
}): SafeHtml {
  const { project, component } = p;
  return (
    <Layout
      ctx={p.ctx}
      title={`${project.name} / ${component.name}`}
      crumbs={[{ text: 'Projects', href: urls.projects() }, { text: project.name, href: urls.project(project.slug) }, { text: component.name }]}
    >
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">
            {component.name}
            {component.locked ? <span class="Label Label--attention ml-2 v-align-middle">Locked</span> : null}
          </h1>
        </div>
        <StatsSummary stats={p.stats} />
        <section aria-labelledby="repository-heading" id="repository" class="Box mb-4">
          <div class="Box-header d-flex flex-items-center">
            <h2 id="repository-heading" class="Box-title flex-auto">
              Repository
            </h2>
            {p.repository ? (
              <a class="btn btn-sm" href={urls.repository(project.slug, component.slug)}>
                Manage repository
              </a>
            ) : null}
          </div>
          <div class="Box-body f6">
            <p class="mb-1">
              <span class="color-fg-muted">Branch</span> <code>{component.branch}</code>
              {' · '}
              <span class="color-fg-muted">Format</span> <code>{component.file_format}</code>
              {' · '}
              <span class="color-fg-muted">Files</span> <code>{component.filemask}</code>
              {' · '}
              <a href={urls.componentZip(project.slug, component.slug)} download>
                Download all files (zip)
              </a>
            </p>
            <p class="mb-0">
              {component.locked ? 'The component is locked: translating is paused.' : 'The component is open for translation.'}
              {p.repository ? (
                <span data-stat="pending">
                  {' '}
                  {p.repository.pending === 1 ? '1 pending change' : `${p.repository.pending} pending changes`} not yet committed.
                </span>
              ) : null}
            </p>
          </div>
        </section>
        <h2 class="f3 mb-2">Languages</h2>
        {p.languages}
      </div>
    </Layout>
  );
}

/** The languages table of a component: one row per translation (cached by the route while the tables are unchanged). */
export function ComponentLanguages(p: {
  project: TranslationProjectRow;
  component: ComponentRow;
  translations: { row: TranslationRow; name: string; stats: Stats }[];
}): SafeHtml {
  const { project, component } = p;
  if (!p.translations.length) {
    return (
      <Blankslate title="No translations">
        <p>No translation files were found for this component.</p>
      </Blankslate>
    );
  }
  return (
    <StatsTable
      caption={`Translations of ${component.name}`}
      first="Language"
      rows={p.translations.map((t) => ({
        key: t.row.language_code,
        name: <a href={urls.translation(project.slug, component.slug, t.row.language_code)}>{t.name}</a>,
        stats: t.stats,
        translate: translateLinks(project.slug, component.slug, t.row.language_code),
      }))}
    />
  );
}

export function LanguagesPage(p: { ctx: WebCtx; languages: { row: LanguageRow; stats: Stats }[]; page: number; hasNext: boolean }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title="Languages" crumbs={[{ text: 'Languages' }]}>
      <div class="tr">
        <div class="Subhead">
          <h1 class="Subhead-heading">Languages</h1>
        </div>
        <SearchBox action={urls.search()} label="Search strings" id="languages-search" />
        {p.languages.length ? (
          <StatsTable
            caption="Languages"
            first="Language"
            rows={p.languages.map((l) => ({ key: l.row.code, name: <a href={urls.language(l.row.code)}>{l.row.name}</a>, stats: l.stats, translate: null }))}
          />
        ) : (
          <Blankslate title="No languages">
            <p>No language has a translation you can see yet.</p>
          </Blankslate>
        )}
        <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
      </div>
    </Layout>
  );
}
