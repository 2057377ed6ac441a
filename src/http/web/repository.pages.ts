// The repository pages: project home, directory, file, raw, blame, history,
// commit, compare, branches and tags. Every read goes through the project the dispatcher resolved with
// the viewer's access (read_code as the repository API checks it), the long-lived cat-file readers and
// content-addressed caches; the one write (deleting a branch) goes through the repository service.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { blobInfo, rawBlob } from '../../domain/repository/blobs.ts';
import { MAINTAINER, type RefRules } from '../../domain/repository/branch-protection.ts';
import { commitsBetween, mergeBase } from '../../domain/repository/compare.ts';
import type { RepoContext } from '../../domain/repository/context.ts';
import { canReadCode } from '../../domain/repository/read-access.ts';
import { isValidNewRefName } from '../../domain/repository/refs.ts';
import { listing } from '../../domain/repository/tree.ts';
import { StarsService } from '../../domain/projects/stars.service.ts';
import { type BlameGroup, blame } from '../../git/blame.ts';
import { BoundedMap } from '../../lib/bounded-map.ts';
import { diffBetween, diffLimits, emptyTree } from '../../git/diff.ts';
import type { Commit } from '../../git/objects.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { renderDiff } from '../../web/diff.ts';
import { render, type SafeHtml } from '../../web/jsx/jsx-runtime.ts';
import { BLOB_VIEW_MAX, highlightForView, isBinary } from '../../web/highlight.ts';
import {
  BlamePage,
  BlobPage,
  BranchesPage,
  type BranchRow,
  CODE_MARKER,
  codeLinesHtml,
  CommitPage,
  CommitsPage,
  ComparePage,
  ProjectHomePage,
  type ProjectNav,
  type RefLists,
  TagPage,
  TagsPage,
  TreePage,
  type TreeRow,
  urls,
} from '../../web/views/repository/pages.tsx';
import { commitCount, extractRef, historyPage, lastCommitsOf, storageSize } from './repository-reads.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';
import { sshUrlToRepo } from '../../domain/core/ssh-url.ts';

const README = /^readme(\.(md|markdown|txt|rst))?$/i;
const IMAGE = /\.(png|jpe?g|gif|webp|bmp|ico)$/i;
const PER_PAGE = 40;
/** blame of (repository, commit, path): immutable */
const blames = new BoundedMap<BlameGroup[]>(500);

/** The project's frame: its names, whether the viewer reads its code, and the open issues of its Issues tab. */
async function navOf(c: Container, ctx: WebCtx, r: ResolvedProject, readCode: boolean): Promise<ProjectNav> {
  return {
    ctx,
    fullPath: `${r.namespace.full_path}/${r.project.path}`,
    name: r.project.name,
    defaultBranch: r.project.default_branch || 'main',
    readCode,
    openIssues: await c.issuesQuery.openCount(ctx.actor, r),
    settings: r.access.abilities.has('admin_project'),
  };
}

function repoContext(c: Container, r: ResolvedProject): RepoContext {
  const fullPath = `${r.namespace.full_path}/${r.project.path}`;
  return { ...r, repo: c.repos.repository(r.project), fullPath, webUrl: `${c.config.externalUrl}/${fullPath}` };
}

/** The repository of a page that shows code: 403 without read_code (as the repository API answers). */
function codeContext(c: Container, ctx: WebCtx, r: ResolvedProject): RepoContext {
  if (!canReadCode(ctx.actor, r.project, r.access)) throw Errors.forbidden();
  return repoContext(c, r);
}

async function refLists(rc: RepoContext): Promise<RefLists> {
  const refs = rc.repo.exists() ? await rc.repo.refs() : [];
  return { branches: refs.filter((x) => x.kind === 'branch').map((x) => x.short), tags: refs.filter((x) => x.kind === 'tag').map((x) => x.short) };
}

/** The rows of a directory with the last commit of each entry. */
async function treeRows(rc: RepoContext, commit: string, path: string, treeSha: string): Promise<TreeRow[]> {
  const l = await listing(rc.repo, treeSha, path, false);
  const last = await lastCommitsOf(
    rc.repo,
    commit,
    path,
    l.entries.map((e) => e.name),
  );
  const commits = new Map<string, Commit | null>();
  await Promise.all([...new Set(last.values())].map(async (s) => commits.set(s, await rc.repo.commit(s))));
  return l.entries.map((e) => ({ name: e.name, path: e.path, type: e.type, last: commits.get(last.get(e.name) ?? '') ?? null }));
}

/** The object at `path` of a commit (null when nothing is there). */
async function objectAt(rc: RepoContext, commit: string, path: string): Promise<{ sha: string; type: string; size: number } | null> {
  if (path === '') {
    const parsed = await rc.repo.commit(commit);
    return parsed ? { sha: parsed.tree, type: 'tree', size: 0 } : null;
  }
  const o = await rc.repo.info(`${commit}:${path}`);
  return o ? { sha: o.sha, type: o.type, size: o.size } : null;
}

function pageNumber(q: unknown): number {
  const n = Number((q as { page?: string }).page ?? 1);
  return Number.isInteger(n) && n >= 1 && n <= 100_000 ? n : 1;
}

function viewOf(q: unknown): 'inline' | 'parallel' {
  return (q as { view?: string }).view === 'parallel' ? 'parallel' : 'inline';
}

export function repositoryPages(app: FastifyInstance, c: Container, web: Web): void {
  /** The diff between two commits as HTML, cached: the objects are immutable (the key has the limits). */
  const diffs = new BoundedMap<Promise<{ html: SafeHtml; overflow: boolean }>>(200);
  async function renderedDiff(rc: RepoContext, from: string, to: string, expanded: boolean, view: 'inline' | 'parallel') {
    const limits = diffLimits(await c.settings.get(), expanded);
    const key = `${rc.repo.gitDir}\0${from}\0${to}\0${view}\0${JSON.stringify(limits)}`;
    let p = diffs.get(key);
    if (!p) {
      p = diffBetween(rc.repo, from, to, limits).then((d) => ({ html: renderDiff(d.files, { viewType: view }), overflow: d.overflow }));
      diffs.set(key, p);
      p.catch(() => diffs.set(key, undefined as never));
    }
    return p;
  }

  const stars = new StarsService({ db: c.db, resolve: c.resolve });

  // ---- project home ----
  web.projectPage('/', async (_req, reply, { ctx, resolved }) => {
    const readCode = canReadCode(ctx.actor, resolved.project, resolved.access);
    const n = await navOf(c, ctx, resolved, readCode);
    const rc = repoContext(c, resolved);
    const p = resolved.project;
    const starCount = (await stars.counts([p.id])).get(p.id) ?? 0;
    const base = {
      n,
      description: p.description,
      visibility: p.visibility,
      starCount,
      httpUrl: `${c.config.externalUrl}/${n.fullPath}.git`,
      sshUrl: sshUrlToRepo(c.config.externalUrl, n.fullPath),
    };
    const empty = !rc.repo.exists() || (await rc.repo.isEmpty());
    const refs = readCode && !empty ? await refLists(rc) : { branches: [], tags: [] };
    const ref = n.defaultBranch;
    const commit = readCode && !empty ? await rc.repo.resolveCommit(ref) : null;
    if (!readCode || empty || !commit) {
      return web.page(
        reply,
        ProjectHomePage({ ...base, empty: readCode && (empty || !commit), ref, refs, stats: null, rows: [], readme: null, lastCommit: null }),
      );
    }
    const head = (await rc.repo.commit(commit))!;
    const [rows, commits, storage] = await Promise.all([treeRows(rc, commit, '', head.tree), commitCount(rc.repo, commit), storageSize(rc.repo)]);
    let readme: { name: string; text: string; markdown: boolean } | null = null;
    const readmeRow = rows.find((r) => r.type === 'blob' && README.test(r.name));
    if (readmeRow) {
      const o = await rc.repo.read(`${commit}:${readmeRow.path}`);
      if (o?.content && o.content.length <= BLOB_VIEW_MAX && !isBinary(o.content)) {
        readme = { name: readmeRow.name, text: o.content.toString('utf8'), markdown: /\.(md|markdown)$/i.test(readmeRow.name) };
      }
    }
    return web.page(
      reply,
      ProjectHomePage({
        ...base,
        empty: false,
        ref,
        refs,
        stats: { commits, branches: refs.branches.length, tags: refs.tags.length, storage },
        rows,
        readme,
        lastCommit: head,
      }),
    );
  });

  // ---- the ref switcher (GET form): to the same page at the chosen ref ----
  web.projectPage('/-/refs/switch', async (req, reply, { ctx, resolved }) => {
    const rc = codeContext(c, ctx, resolved);
    const q = req.query as { ref?: string; path?: string; dest?: string };
    const n = await navOf(c, ctx, resolved, true);
    const ref = typeof q.ref === 'string' ? q.ref : '';
    if (!ref || !(await rc.repo.resolveCommit(ref))) return web.notFound(req, reply);
    const path = typeof q.path === 'string' ? q.path : '';
    return reply.redirect(q.dest === 'commits' ? urls.commits(n, ref, path) : urls.tree(n, ref, path), 302);
  });

  // ---- directory ----
  web.projectPage('/-/tree/*', async (req, reply, { ctx, resolved, params }) => {
    const rc = codeContext(c, ctx, resolved);
    const x = await extractRef(rc.repo, params['*'] ?? '');
    if (!x) return web.notFound(req, reply);
    const o = await objectAt(rc, x.commit, x.path);
    if (!o) return web.notFound(req, reply);
    const n = await navOf(c, ctx, resolved, true);
    if (o.type === 'blob') return reply.redirect(urls.blob(n, x.ref, x.path), 302);
    if (o.type !== 'tree') return web.notFound(req, reply);
    const [rows, refs] = await Promise.all([treeRows(rc, x.commit, x.path, o.sha), refLists(rc)]);
    return web.page(reply, TreePage({ n, ref: x.ref, path: x.path, refs, rows }));
  });

  /** The file a blob/raw/blame URL names, or null (→ 404). */
  async function fileOf(rc: RepoContext, rest: string | undefined) {
    const x = await extractRef(rc.repo, rest ?? '');
    if (!x || !x.path) return null;
    const o = await objectAt(rc, x.commit, x.path);
    if (!o || o.type !== 'blob') return null;
    return { ...x, blob: o };
  }

  // ---- file ----
  web.projectPage('/-/blob/*', async (req, reply, { ctx, resolved, params }) => {
    const rc = codeContext(c, ctx, resolved);
    const f = await fileOf(rc, params['*']);
    if (!f) return web.notFound(req, reply);
    const n = await navOf(c, ctx, resolved, true);
    const base = { n, ref: f.ref, commit: f.commit, path: f.path, size: f.blob.size, lines: null, language: null, markdown: null, image: false };
    // the file's last commit (a git walk when not cached) and its bytes, read side by side
    const [last, o] = await Promise.all([
      lastCommitsOf(rc.repo, f.commit, f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '', [f.path.slice(f.path.lastIndexOf('/') + 1)]),
      f.blob.size > BLOB_VIEW_MAX || IMAGE.test(f.path) ? null : rc.repo.read(f.blob.sha),
    ]);
    const lastSha = [...last.values()][0];
    const lastCommit = lastSha ? await rc.repo.commit(lastSha) : null;
    if (IMAGE.test(f.path)) return web.page(reply, BlobPage({ ...base, reason: null, image: true, last: lastCommit }));
    if (f.blob.size > BLOB_VIEW_MAX) return web.page(reply, BlobPage({ ...base, reason: 'too-large', last: lastCommit }));
    const data = o?.content ?? Buffer.alloc(0);
    if (isBinary(data)) return web.page(reply, BlobPage({ ...base, reason: 'binary', last: lastCommit }));
    if (/\.(md|markdown)$/i.test(f.path) && (req.query as { plain?: string }).plain !== '1') {
      return web.page(reply, BlobPage({ ...base, reason: null, markdown: data.toString('utf8'), last: lastCommit }));
    }
    const h = highlightForView(f.blob.sha, f.path, data);
    const page = `<!DOCTYPE html>\n${render(BlobPage({ ...base, reason: null, lines: h.lines, language: h.language, last: lastCommit }))}`;
    const at = page.indexOf(CODE_MARKER);
    return web.page(reply, page.slice(0, at) + codeLinesHtml(h.lines) + page.slice(at + CODE_MARKER.length));
  });

  // ---- raw bytes ----
  web.projectPage('/-/raw/*', async (req, reply, { ctx, resolved, params }) => {
    const rc = codeContext(c, ctx, resolved);
    const f = await fileOf(rc, params['*']);
    if (!f) return web.notFound(req, reply);
    const info = await blobInfo(rc, f.blob.sha);
    const blob = await rawBlob(rc, info, req.method === 'HEAD');
    reply
      .header('content-type', blob.type)
      .header('content-disposition', blob.disposition)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'max-age=60, private')
      .header('content-security-policy', "default-src 'none'; sandbox");
    if (blob.length !== undefined) reply.header('content-length', String(blob.length));
    return reply.send(blob.body ?? '');
  });

  // ---- blame ----
  web.projectPage('/-/blame/*', async (req, reply, { ctx, resolved, params }) => {
    const rc = codeContext(c, ctx, resolved);
    const f = await fileOf(rc, params['*']);
    if (!f) return web.notFound(req, reply);
    const n = await navOf(c, ctx, resolved, true);
    // big or binary files have no blame view: the file page says why and links to raw
    if (f.blob.size > BLOB_VIEW_MAX || isBinary((await rc.repo.read(f.blob.sha))?.content ?? Buffer.alloc(0))) {
      return reply.redirect(urls.blob(n, f.ref, f.path), 302);
    }
    const key = `${rc.repo.gitDir}\0${f.commit}\0${f.path}`;
    let groups = blames.get(key);
    if (!groups) blames.set(key, (groups = await blame(rc.repo, f.commit, f.path)));
    const commits = new Map<string, Commit>();
    await Promise.all(
      [...new Set(groups.map((g) => g.commit))].map(async (s) => {
        const cm = await rc.repo.commit(s);
        if (cm) commits.set(s, cm);
      }),
    );
    return web.page(reply, BlamePage({ n, ref: f.ref, commit: f.commit, path: f.path, groups, commits }));
  });

  // ---- history ----
  const commitsPage = async (req: FastifyRequest, reply: FastifyReply, ctx: WebCtx, resolved: ResolvedProject, rest: string) => {
    const rc = codeContext(c, ctx, resolved);
    const x = await extractRef(rc.repo, rest);
    if (!x) return web.notFound(req, reply);
    if (x.path && !(await objectAt(rc, x.commit, x.path))) return web.notFound(req, reply);
    const page = pageNumber(req.query);
    const [{ commits, hasNext }, refs] = await Promise.all([historyPage(rc, x.commit, x.path, page, PER_PAGE), refLists(rc)]);
    return web.page(reply, CommitsPage({ n: await navOf(c, ctx, resolved, true), ref: x.ref, path: x.path, refs, commits, page, hasNext }));
  };
  web.projectPage('/-/commits/*', (req, reply, { ctx, resolved, params }) => commitsPage(req, reply, ctx, resolved, params['*'] ?? ''));
  web.projectPage('/-/commits', (req, reply, { ctx, resolved }) => commitsPage(req, reply, ctx, resolved, resolved.project.default_branch || 'main'));

  // ---- one commit ----
  web.projectPage('/-/commit/:sha', async (req, reply, { ctx, resolved, params }) => {
    const rc = codeContext(c, ctx, resolved);
    const sha = params.sha ?? '';
    if (!/^[0-9a-f]{7,64}$/.test(sha) || !rc.repo.exists()) return web.notFound(req, reply);
    const full = await rc.repo.resolveCommit(sha);
    const commit = full ? await rc.repo.commit(full) : null;
    if (!commit) return web.notFound(req, reply);
    const view = viewOf(req.query);
    const [diff, rows] = await Promise.all([
      renderedDiff(rc, commit.parents[0] ?? emptyTree(commit.sha), commit.sha, true, view),
      c.commitNotes.list(rc, commit.sha).execute(),
    ]);
    const users = await c.users.basicByIds(rows.map((r) => r.author_id));
    const notes = rows.map((r) => ({
      id: r.id,
      author: (r.author_id !== null ? users.get(r.author_id)?.name : null) ?? 'Ghost User',
      note: r.note,
      createdAt: r.created_at,
      path: r.path,
      line: r.line,
    }));
    return web.page(reply, CommitPage({ n: await navOf(c, ctx, resolved, true), commit, diff: diff.html, overflow: diff.overflow, view, notes }));
  });

  // ---- compare ----
  const compare = async (req: FastifyRequest, reply: FastifyReply, ctx: WebCtx, resolved: ResolvedProject, from: string, to: string) => {
    const rc = codeContext(c, ctx, resolved);
    const n = await navOf(c, ctx, resolved, true);
    const refs = await refLists(rc);
    const view = viewOf(req.query);
    if (!from || !to) return web.page(reply, ComparePage({ n, refs, from: from || n.defaultBranch, to, result: null, error: null, view }));
    const [fromSha, toSha] = await Promise.all([rc.repo.resolveCommit(from), rc.repo.resolveCommit(to)]);
    if (!fromSha || !toSha) return web.notFound(req, reply);
    if (fromSha === toSha) {
      return web.page(reply, ComparePage({ n, refs, from, to, result: { commits: [], diff: renderDiff([]), overflow: false, same: true }, error: null, view }));
    }
    const [diff, commits] = await Promise.all([
      (async () => {
        const base = await mergeBase(rc.repo, [fromSha, toSha]);
        return renderedDiff(rc, base ?? emptyTree(toSha), toSha, false, view);
      })(),
      commitsBetween(rc.repo, fromSha, toSha),
    ]);
    return web.page(
      reply,
      ComparePage({
        n,
        refs,
        from,
        to,
        result: { commits: commits.reverse(), diff: diff.html, overflow: diff.overflow, same: false },
        error: null,
        view,
      }),
    );
  };
  web.projectPage('/-/compare', (req, reply, { ctx, resolved }) => compare(req, reply, ctx, resolved, '', ''));
  web.projectPage('/-/compare/go', async (req, reply, { ctx, resolved }) => {
    const q = req.query as { from?: string; to?: string };
    const n = await navOf(c, ctx, resolved, true);
    const from = typeof q.from === 'string' ? q.from.trim() : '';
    const to = typeof q.to === 'string' ? q.to.trim() : '';
    if (!from || !to) return compare(req, reply, ctx, resolved, from, to);
    const rc = codeContext(c, ctx, resolved);
    const [fromSha, toSha] = await Promise.all([rc.repo.resolveCommit(from), rc.repo.resolveCommit(to)]);
    if (!fromSha || !toSha) {
      // what was typed stays in the form, with what is wrong with it
      const missing = [!fromSha ? from : null, !toSha ? to : null].filter((x): x is string => x !== null);
      const error = `No branch, tag or commit named ${missing.map((m) => `“${m}”`).join(' or ')} exists.`;
      return web.page(reply, ComparePage({ n, refs: await refLists(rc), from, to, result: null, error, view: 'inline' }), 422);
    }
    return reply.redirect(urls.compare(n, from, to), 302);
  });
  web.projectPage('/-/compare/*', (req, reply, { ctx, resolved, params }) => {
    const spec = params['*'] ?? '';
    const i = spec.indexOf('...');
    if (i < 0) return web.notFound(req, reply);
    return compare(req, reply, ctx, resolved, spec.slice(0, i), spec.slice(i + 3));
  });

  // ---- branches ----
  /** The branches and tags APIs' context: a repository feature the viewer cannot use is 404 there. */
  const refsContextOf = (ctx: WebCtx, r: ResolvedProject) => c.repository.refsContext(ctx.actor, String(r.project.id), true);

  /** Whether the viewer may delete a branch: Branches::DeleteService's rules (push, not default, protected only by a Maintainer). */
  function canDelete(rc: RepoContext, ctx: WebCtx, rules: RefRules, name: string): boolean {
    if (!ctx.user || !rc.access.abilities.has('push_code')) return false;
    if (name === (rc.project.default_branch || 'main')) return false;
    return !rules.branch(name) || ctx.actor.isAdmin || rc.access.level >= MAINTAINER;
  }

  web.projectPage('/-/branches', async (req, reply, { ctx, resolved }) => {
    const rc = await refsContextOf(ctx, resolved);
    const n = await navOf(c, ctx, resolved, true);
    const branches = rc.repo.exists() ? await rc.repo.branches() : [];
    const rules = await c.repository.refRules(rc, ctx.actor);
    const rows: BranchRow[] = await Promise.all(
      branches.map(async (b) => ({
        name: b.short,
        commit: await rc.repo.commit(b.commit),
        isDefault: b.short === n.defaultBranch,
        isProtected: rules.branch(b.short) !== null,
        canDelete: canDelete(rc, ctx, rules, b.short),
        projectId: rc.project.id,
      })),
    );
    // the default branch first, then the most recently updated
    rows.sort(
      (a, b) => Number(b.isDefault) - Number(a.isDefault) || (b.commit?.committer.time ?? 0) - (a.commit?.committer.time ?? 0) || a.name.localeCompare(b.name),
    );
    void req;
    return web.page(reply, BranchesPage({ n, rows }));
  });

  app.post('/-/p/:project_id/branches/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!/^\d+$/.test(id)) return web.notFound(req, reply);
    const resolved = await c.resolve.project(ctx.actor, Number(id));
    const rc = await refsContextOf(ctx, resolved);
    const n = await navOf(c, ctx, resolved, true);
    const name = String((req.body as { branch?: unknown } | null)?.branch ?? '');
    if (!isValidNewRefName(name)) return web.notFound(req, reply);
    const ref = rc.repo.exists() ? await rc.repo.branch(name) : undefined;
    if (!ref) return web.notFound(req, reply);
    if (!canDelete(rc, ctx, await c.repository.refRules(rc, ctx.actor), name)) throw Errors.forbidden();
    try {
      await c.repository.deleteBranch(rc, ctx.actor, ref);
    } catch (e) {
      if (e instanceof DomainError && e.status < 500) {
        // a refusal's message ("You can only delete protected branches…"), else a generic alert
        const text = typeof e.detail === 'string' ? e.detail : 'The branch could not be deleted.';
        return web.redirect(reply, urls.branches(n), { kind: 'alert', text });
      }
      throw e;
    }
    return web.redirect(reply, urls.branches(n), { kind: 'notice', text: `Branch ${name} was deleted.` });
  });

  // ---- tags ----
  web.projectPage('/-/tags', async (_req, reply, { ctx, resolved }) => {
    const rc = await refsContextOf(ctx, resolved);
    const tags = rc.repo.exists() ? await rc.repo.tags() : [];
    const rows = await Promise.all(tags.map(async (t) => ({ name: t.short, commit: await rc.repo.commit(t.commit), message: t.tag?.message ?? null })));
    rows.sort((a, b) => (b.commit?.committer.time ?? 0) - (a.commit?.committer.time ?? 0) || a.name.localeCompare(b.name));
    return web.page(reply, TagsPage({ n: await navOf(c, ctx, resolved, true), rows }));
  });

  web.projectPage('/-/tags/*', async (req, reply, { ctx, resolved, params }) => {
    const rc = await refsContextOf(ctx, resolved);
    const name = params['*'] ?? '';
    const t = rc.repo.exists() && name ? await rc.repo.tag(name) : undefined;
    if (!t) return web.notFound(req, reply);
    const tagger = t.tag?.tagger ? t.tag.tagger.name : null;
    return web.page(
      reply,
      TagPage({
        n: await navOf(c, ctx, resolved, true),
        tag: { name: t.short, commit: await rc.repo.commit(t.commit), message: t.tag?.message ?? null },
        tagger,
      }),
    );
  });
}
