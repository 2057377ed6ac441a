// The translation pages (Weblate's model): projects, a project, a project's language, a component (one
// row per language), a translation (statistics, the editor's filters, `q`, download and upload), the
// component's repository page (commit, push, pull, lock), languages, the share and project-language
// shortcuts (the site search of units is translation-search.ts, at /search/). Every read goes through the translation domain with the
// viewer's actor (visibility.ts: what is invisible is the 404 page); every action through the same
// domain code as the API (permissions, repository operations, files).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ComponentRow, TranslationProjectRow, TranslationRow } from '../../db/schema.ts';
import { stamp } from '../../db/versions.ts';
import { MERGE_FAILURE_ACTIONS, REPOSITORY_ACTIONS } from '../../domain/translation/changes/actions.ts';
import {
  componentDownload,
  requireUploadPermission,
  translationDownload,
  uploadMethodAllowed,
  uploadTranslationFile,
} from '../../domain/translation/files/file-requests.ts';
import { UPLOAD_CONFLICTS, UPLOAD_FUZZY } from '../../domain/translation/files/files.service.ts';
import type { TranslationPath } from '../../domain/translation/queries.ts';
import { OPERATION_DENIED, runOperation } from '../../domain/translation/repository/operations.ts';
import { type Counts, sumCounts } from '../../domain/translation/stats/stats.ts';
import { Errors } from '../../lib/errors.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { raw, render, type SafeHtml } from '../../web/jsx/jsx-runtime.ts';
import { uploadRequest, validOrRefused } from '../translation/validators.ts';
import {
  ComponentLanguages,
  ComponentPage,
  LanguagesPage,
  LanguageTranslationsPage,
  ProjectPage,
  ProjectsPage,
} from '../../web/views/translation/overviews.tsx';
import { type Stats, statsOf, urls } from '../../web/views/translation/parts.tsx';
import { RepositoryPage, TranslationPage, type UploadForm } from '../../web/views/translation/translation.tsx';
import { messagesOf, one, pageOf, type Query, slice } from './translation-search.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const OPTS = { config: PAGE, schema: HIDDEN };
const PER_PAGE = 50;
/** what a component's languages table is made of */
const LANGUAGE_TABLES = ['translation_projects', 'components', 'translations', 'languages'] as const;
const OFFERED_METHODS = ['translate', 'suggest', 'approve', 'fuzzy', 'replace'] as const;

export function translationPages(app: FastifyInstance, c: Container, web: Web): void {
  const { queries: q, reads } = c.translation;
  const { permissions: perms, repository, files } = c.translation.writes;

  // ---- projects --------------------------------------------------------------------------------

  app.get('/projects/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const page = pageOf(req);
    const { total, rows } = await reads.projects(ctx.actor, () => slice(page, PER_PAGE));
    const stats = await reads.projectsStatistics(
      ctx.actor,
      rows.map((r) => r.id),
      'targets',
    );
    return web.page(
      reply,
      ProjectsPage({
        ctx,
        projects: rows.map((row) => ({ row, stats: statsOf(stats.get(row.id) ?? ZERO) })),
        page,
        hasNext: page * PER_PAGE < total,
      }),
    );
  });

  app.get<{ Params: { project: string } }>('/projects/:project/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const page = pageOf(req);
    const project = await q.project(ctx.actor, req.params.project);
    const [{ total, rows }, counts, languages] = await Promise.all([
      reads.projectComponents(ctx.actor, project, () => slice(page, PER_PAGE)),
      reads.projectStatistics(ctx.actor, project, 'targets'),
      reads.projectLanguages(ctx.actor, project),
    ]);
    const stats = await reads.componentsStatistics(
      rows.map((r) => r.id),
      'targets',
    );
    return web.page(
      reply,
      ProjectPage({
        ctx,
        project,
        stats: statsOf(counts),
        components: rows.map((row) => ({ row, stats: statsOf(stats.get(row.id) ?? ZERO) })),
        languages: languages.map((l) => ({ code: l.code, name: l.name, stats: statsOf(l) })),
        page,
        hasNext: page * PER_PAGE < total,
      }),
    );
  });

  /** a language's translations, in one project or everywhere the viewer may see */
  const languagePage = async (req: FastifyRequest, reply: FastifyReply, projectSlug: string | null, code: string) => {
    const ctx = await web.context(req);
    const project = projectSlug === null ? null : await q.project(ctx.actor, projectSlug);
    const language = await q.language(ctx.actor, code);
    const { rows, related } = await reads.languageTranslations(ctx.actor, language, project ?? undefined);
    if (project && !rows.length) throw Errors.notFound();
    const list = rows.map((translation) => {
      const component = related.components.get(translation.component_id)!;
      return { project: related.projects.get(component.project_id)!, component, translation, stats: statsOf(countsOf(translation)) };
    });
    return web.page(reply, LanguageTranslationsPage({ ctx, language, project, stats: statsOf(sumCounts(rows)), rows: list }));
  };

  app.get<{ Params: { project: string; language: string } }>('/projects/:project/-/:language/', OPTS, async (req, reply) =>
    languagePage(req, reply, req.params.project, req.params.language),
  );

  // ---- components --------------------------------------------------------------------------------

  // A component's languages table is the same for every viewer: kept, rendered, while the translation
  // tables are unchanged (any write misses it), so the overview of 100 languages costs two lookups. The
  // summary above it is the progress of the target languages (the source translation is only a row).
  const languagesCache = new VersionedCache<{ table: SafeHtml; stats: Stats }>(1000, 60_000);
  const componentLanguages = async (req: FastifyRequest, project: TranslationProjectRow, component: ComponentRow) => {
    const key = `${component.id}|${project.slug}|${component.slug}`;
    const st = stamp(await req.versions(), LANGUAGE_TABLES);
    const hit = languagesCache.get(key, st);
    if (hit) return hit;
    const rows = await reads.componentLanguages(component);
    const translations = rows.map((row) => ({ row, name: row.language_name, stats: statsOf(countsOf(row)) }));
    const value = { table: raw(render(ComponentLanguages({ project, component, translations }))), stats: statsOf(sumCounts(rows.filter((r) => !r.is_source))) };
    languagesCache.set(key, st, value);
    return value;
  };

  app.get<{ Params: { project: string; component: string } }>('/projects/:project/:component/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const { project, component } = await q.component(ctx.actor, req.params.project, req.params.component);
    const [languages, vcs] = await Promise.all([
      componentLanguages(req, project, component),
      ctx.user ? perms.can(ctx.actor, 'vcs.view', { project, component }) : false,
    ]);
    const pending = vcs ? ((await repository.pendingCounts([component.id])).get(component.id) ?? 0) : 0;
    return web.page(
      reply,
      ComponentPage({ ctx, project, component, stats: languages.stats, languages: languages.table, repository: vcs ? { pending } : null }),
    );
  });

  // the repository page: Weblate's vcs.view (the API's GET …/repository/ is 403 without it, anonymous included)
  app.get<{ Params: { project: string; component: string } }>('/projects/:project/:component/-/repository/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const { project, component } = await q.component(ctx.actor, req.params.project, req.params.component);
    const scope = { project, component };
    if (!ctx.user || !(await perms.can(ctx.actor, 'vcs.view', scope))) throw Errors.forbidden(OPERATION_DENIED);
    const [status, last, commit, push, pull, lock] = await Promise.all([
      repository.status(component),
      reads.lastChange(component, REPOSITORY_ACTIONS),
      perms.can(ctx.actor, 'vcs.commit', scope),
      perms.can(ctx.actor, 'vcs.push', scope),
      perms.can(ctx.actor, 'vcs.update', scope),
      perms.can(ctx.actor, 'component.lock', scope),
    ]);
    const mergeFailure = last && MERGE_FAILURE_ACTIONS.has(last.action) ? last.target : null;
    return web.page(reply, RepositoryPage({ ctx, project, component, status, mergeFailure, can: { commit, push, pull, lock } }));
  });

  // commit, push, pull (the API's POST …/repository/) and lock, unlock (its POST …/lock/)
  app.post<{ Params: { project: string; component: string; operation: string } }>('/-/translation/:project/:component/:operation', OPTS, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const op = req.params.operation;
    if (!['commit', 'push', 'pull', 'lock', 'unlock'].includes(op)) return web.notFound(req, reply);
    const { project, component } = await q.component(ctx.actor, req.params.project, req.params.component);
    const back = urls.repository(project.slug, component.slug);
    if (op === 'lock' || op === 'unlock') {
      await perms.require(ctx.actor, 'component.lock', { project, component }, OPERATION_DENIED);
      const locked = await c.translation.components.setLock(ctx.actor, project, component, { lock: op === 'lock' });
      return web.redirect(reply, back, { kind: 'notice', text: locked ? 'The component is now locked.' : 'The component is now unlocked.' });
    }
    const done = await runOperation(perms, repository, ctx.actor, op as 'commit' | 'push' | 'pull', { project, components: [component] });
    const verb = { commit: 'committed', push: 'pushed', pull: 'updated from upstream' }[op as 'commit' | 'push' | 'pull'];
    if (!done.result) return web.redirect(reply, back, { kind: 'alert', text: done.detail || `The repository could not be ${verb}.` });
    return web.redirect(reply, back, { kind: 'notice', text: done.detail || `The repository was ${verb}.` });
  });

  // ---- one translation -------------------------------------------------------------------------------

  const translationView = async (ctx: WebCtx, path: TranslationPath, upload: Omit<UploadForm, 'methods'>) => {
    const { project, component, translation } = path;
    const [related, methods] = await Promise.all([
      reads.translationStatisticsRelated(translation),
      (async () => {
        if (!ctx.user || !(await perms.can(ctx.actor, 'upload.perform', { project, component, translation }))) return [];
        const offered: string[] = [];
        for (const m of OFFERED_METHODS) if (await uploadMethodAllowed(files, perms, ctx.actor, path, m)) offered.push(m);
        return offered;
      })(),
    ]);
    const downloads: { format: string; label: string }[] = [];
    if (translation.filename) downloads.push({ format: '', label: `Original file (${translation.filename.slice(translation.filename.lastIndexOf('/') + 1)})` });
    for (const { name, extension } of files.conversions(component)) downloads.push({ format: name, label: `Converted to ${name} (.${extension})` });
    return TranslationPage({
      ctx,
      project,
      component,
      translation,
      languageName: related.languages.get(translation.language_id)?.language.name ?? translation.language_code,
      stats: statsOf(countsOf(translation)),
      downloads,
      upload: { ...upload, methods },
    });
  };

  app.get<{ Params: { project: string; component: string; language: string } }>('/projects/:project/:component/:language/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const path = await q.translation(ctx.actor, req.params.project, req.params.component, req.params.language);
    return web.page(reply, await translationView(ctx, path, { values: {}, errors: null }));
  });

  app.post<{ Params: { project: string; component: string; language: string } }>(
    '/-/translation/:project/:component/:language/upload',
    OPTS,
    async (req, reply) => {
      const ctx = await web.requireUser(req);
      const path = await q.translation(ctx.actor, req.params.project, req.params.component, req.params.language);
      const fields = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
      // the form always sends every field; an empty file input arrives as an empty string
      const { authenticity_token: _t, ...data } = fields;
      try {
        const request = await validOrRefused(uploadRequest(data), () => requireUploadPermission(perms, ctx.actor, path));
        const r = await uploadTranslationFile(files, perms, ctx.actor, path, request);
        const text = `Processed ${r.total} string${r.total === 1 ? '' : 's'} from the uploaded file (skipped: ${r.skipped}, not found: ${r.not_found}, updated: ${r.accepted}).`;
        return web.redirect(reply, urls.translation(path.project.slug, path.component.slug, path.languageCode), { kind: 'notice', text });
      } catch (e) {
        const errors = messagesOf(e);
        if (!errors) throw e;
        const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
        const values = {
          method: str(data.method),
          conflicts: (UPLOAD_CONFLICTS as readonly string[]).includes(String(data.conflicts)) ? String(data.conflicts) : undefined,
          fuzzy: (UPLOAD_FUZZY as readonly string[]).includes(String(data.fuzzy)) ? String(data.fuzzy) : undefined,
        };
        return web.page(reply, await translationView(ctx, path, { values, errors }), 422);
      }
    },
  );

  /** A produced file with the headers of the API's file/ endpoints. */
  async function sendDownload(reply: FastifyReply, download: Awaited<ReturnType<typeof translationDownload>>) {
    const { contentType, disposition, bytes } = await download.produce();
    return reply
      .header('content-type', contentType)
      .header('content-disposition', disposition)
      .header('last-modified', download.modified.toUTCString())
      .header('cache-control', 'private, no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(bytes);
  }

  // the file as the API's file/ serves it (Weblate's /download/<project>/<component>/<language>/)
  app.get<{ Params: { project: string; component: string; language: string } }>('/download/:project/:component/:language/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const path = await q.translation(ctx.actor, req.params.project, req.params.component, req.params.language);
    const format = one((req.query as Query).format) || undefined;
    const download = await translationDownload(files, path, { format });
    return sendDownload(reply, download);
  });

  // every file of the component, zipped, as the API's component file/ (`?format=zip:<exporter>` converts each)
  app.get<{ Params: { project: string; component: string } }>('/download/:project/:component/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const path = await q.component(ctx.actor, req.params.project, req.params.component);
    const download = await componentDownload(files, path, one((req.query as Query).format) || 'zip');
    return sendDownload(reply, download);
  });

  // ---- languages, shortcuts, search ----------------------------------------------------------------

  app.get('/languages/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const page = pageOf(req);
    const { total, rows } = await reads.languages(ctx.actor, () => slice(page, PER_PAGE));
    const stats = await reads.languagesStatistics(
      ctx.actor,
      rows.map((r) => r.id),
    );
    const sorted = [...rows].sort((a, b) => a.name.localeCompare(b.name));
    return web.page(
      reply,
      LanguagesPage({ ctx, languages: sorted.map((row) => ({ row, stats: statsOf(stats.get(row.id) ?? ZERO) })), page, hasNext: page * PER_PAGE < total }),
    );
  });

  app.get<{ Params: { language: string } }>('/languages/:language/', OPTS, async (req, reply) => languagePage(req, reply, null, req.params.language));

  // Weblate's share_url: the project page (or its language), as a redirect
  app.get<{ Params: { project: string } }>('/engage/:project/', OPTS, async (req, reply) => {
    const ctx = await web.context(req);
    const project = await q.project(ctx.actor, req.params.project);
    return reply.redirect(urls.project(project.slug), 302);
  });
  const toProjectLanguage = async (req: FastifyRequest<{ Params: { project: string; language: string } }>, reply: FastifyReply) => {
    const ctx = await web.context(req);
    const project = await q.project(ctx.actor, req.params.project);
    const language = await q.language(ctx.actor, req.params.language);
    return reply.redirect(urls.projectLanguage(project.slug, language.code), 302);
  };
  app.get<{ Params: { project: string; language: string } }>('/engage/:project/-/:language/', OPTS, toProjectLanguage);
  app.get<{ Params: { project: string; language: string } }>('/translate/:project/-/:language/', OPTS, toProjectLanguage);
}

const ZERO: Counts = sumCounts([]);

function countsOf(t: TranslationRow): Counts {
  return t as unknown as Counts;
}
