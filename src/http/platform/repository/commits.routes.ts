// The commits API (GitLab lib/api/commits.rb): the history of a ref (git log), one commit with its
// stats, the branches and tags containing a commit, and commits of several file actions at once.
// GET /commits/:sha/diff lives in compare.routes.ts.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { GitError, isSafePath } from '../../../git/command.ts';
import type { Commit } from '../../../git/objects.ts';
import { BRANCH_PREFIX, isValidRevision } from '../../../git/refs.ts';
import type { Repository } from '../../../git/repository.ts';
import { Errors } from '../../../lib/errors.ts';
import { offsetHeaders, pageParams, paginateArray } from '../../../lib/pagination.ts';
import { Enum, IdParams, linkParams, NullableString, PaginationProps, ShaParams } from '../schemas/common.ts';
import { COMMIT_ACTIONS } from '../../../domain/repository/commit-checks.ts';
import { historyPage } from '../../../domain/repository/history.ts';
import { commitBasic, commitDetail, type Stats } from './context.ts';

const TAGS = ['commits'];

// Declared in Grape's order, so that several problems are reported as GitLab lists them.
const ListQuery = Type.Object({
  ref_name: Type.Optional(Type.String()),
  since: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  author: Type.Optional(Type.String()),
  all: Type.Optional(Type.Boolean()),
  with_stats: Type.Optional(Type.Boolean()),
  first_parent: Type.Optional(Type.Boolean()),
  order: Enum(['default', 'topo'] as const, 'default'),
  trailers: Type.Optional(Type.Boolean({ default: false })),
  ...PaginationProps,
});

const ShowQuery = Type.Object({ stats: Type.Optional(Type.Boolean({ default: true })) });

const RefsQuery = Type.Object({
  type: Enum(['branch', 'tag', 'all'] as const, 'all'),
  ...PaginationProps,
});

const ActionBody = Type.Object({
  action: Type.String(),
  file_path: Type.String(),
  previous_path: Type.Optional(Type.String()),
  content: Type.Optional(NullableString),
  encoding: Enum(['text', 'base64'] as const, 'text'),
  last_commit_id: Type.Optional(NullableString),
  execute_filemode: Type.Optional(Type.Boolean()),
});

const CreateBody = Type.Object({
  branch: Type.String({ minLength: 1 }),
  commit_message: Type.String(),
  actions: Type.Array(ActionBody),
  start_branch: Type.Optional(Type.String()),
  start_sha: Type.Optional(Type.String()),
  start_project: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  author_email: Type.Optional(Type.String()),
  author_name: Type.Optional(Type.String()),
  stats: Type.Optional(Type.Boolean({ default: true })),
  force: Type.Optional(Type.Boolean({ default: false })),
});

/** render_api_error!(message, 400) */
const failure = (message: string) => Errors.raw(400, { message });

/**
 * A revision a user names (`main`, `v1.0`, a SHA, `HEAD`), optionally followed by `~n` / `^n`
 * (Gitaly accepts any revision); null when it is not one.
 */
function checkedRevision(rev: string): string | null {
  const m = /^([\s\S]*?)((?:~\d*|\^\d*)*)$/.exec(rev)!;
  return m[1] && isValidRevision(m[1]) ? rev : null;
}

/** The commit a checked revision names, or null. */
async function resolveRevision(repo: Repository, rev: string): Promise<string | null> {
  const checked = checkedRevision(rev);
  if (!checked) return null;
  return (await repo.info(`${checked}^{commit}`))?.sha ?? null;
}

/** A range as `git log` takes it: `a..b`, `a...b` or one revision; null when invalid. */
function parseRange(ref: string): { sides: string[]; op: '..' | '...' | null } | null {
  for (const op of ['...', '..'] as const) {
    const i = ref.indexOf(op);
    if (i < 0) continue;
    const sides = [ref.slice(0, i), ref.slice(i + op.length)];
    return sides.every((s) => checkedRevision(s)) ? { sides, op } : null;
  }
  return checkedRevision(ref) ? { sides: [ref], op: null } : null;
}

/**
 * Grape's DateTime coercion for ISO 8601 values (`2021-09-20`, `2021-09-20T11:50:22.001`,
 * `2021-09-20T11:50:22+02:00`; no zone means UTC, as DateTime.parse reads it): seconds since the epoch.
 */
export function parseDateTime(s: string): number | null {
  const m = /^\s*(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h = '0', mi = '0', se = '0'] = [m[1], m[2], m[3], m[4], m[5], m[6]];
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(se));
  const back = new Date(ms);
  if (back.getUTCFullYear() !== Number(y) || back.getUTCMonth() !== Number(mo) - 1 || back.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(se) > 59) return null;
  let offset = 0;
  const zone = m[7];
  if (zone && zone !== 'Z' && zone !== 'z' && zone !== 'UTC') {
    const digits = zone.replace(':', '');
    offset = (zone.startsWith('-') ? -1 : 1) * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0'));
  }
  return Math.floor(ms / 1000) - offset * 60;
}

/**
 * Additions and deletions of each commit against its first parent (the empty tree for a root
 * commit), as Gitaly's CommitStats counts them (`git diff --numstat parent commit`); one process.
 */
async function commitStats(repo: Repository, commits: Commit[]): Promise<Map<string, Stats>> {
  const out = new Map<string, Stats>();
  if (!commits.length) return out;
  const input = commits.map((c) => (c.parents.length ? `${c.sha} ${c.parents[0]}` : c.sha)).join('\n') + '\n';
  const { stdout } = await repo.run(['diff-tree', '--stdin', '-r', '-M', '--numstat', '--root', '--always'], { input });
  let current: Stats | null = null;
  for (const line of stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    if (tab < 0) {
      const sha = /^[0-9a-f]{40,64}/.exec(line)?.[0];
      if (sha) {
        current = { additions: 0, deletions: 0, total: 0 };
        out.set(sha, current);
      }
      continue;
    }
    if (!current) continue;
    const [a, d] = line.split('\t', 2);
    const add = a === '-' ? 0 : Number(a) || 0;
    const del = d === '-' ? 0 : Number(d) || 0;
    current.additions += add;
    current.deletions += del;
    current.total += add + del;
  }
  for (const c of commits) if (!out.has(c.sha)) out.set(c.sha, { additions: 0, deletions: 0, total: 0 });
  return out;
}

export function commitsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };

  // ---- GET /projects/:id/repository/commits ----------------------------------------------------
  app.get('/api/v4/projects/:id/repository/commits', { config: read, schema: { tags: TAGS, params: IdParams, querystring: ListQuery } }, async (req, reply) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const q = req.query;

    const invalid: string[] = [];
    const since = q.since === undefined ? null : parseDateTime(q.since);
    if (q.since !== undefined && since === null) invalid.push('since is invalid');
    const until = q.until === undefined ? null : parseDateTime(q.until);
    if (q.until !== undefined && until === null) invalid.push('until is invalid');
    const path = q.path ? q.path.replace(/\/+$/, '') : '';
    if (q.path && (!isSafePath(path) || /[\n\r]/.test(path))) invalid.push('path is invalid');
    if (q.author !== undefined && /[\0\n\r]/.test(q.author)) invalid.push('author is invalid');
    if (invalid.length) throw Errors.param(invalid.join(', '));
    if (!ctx.repo.exists()) throw Errors.notFound('Repository');

    const { page, perPage } = pageParams({ path: '', params: {}, page: q.page, per_page: q.per_page });
    const pageReq = { path: req.url.split('?')[0], params: linkParams(req.query, { id: req.params.id }), page: q.page, per_page: q.per_page };

    // the revisions, resolved to SHAs (an unknown ref lists nothing, as GitLab does)
    let revs: string[] | null = [];
    if (!q.all) {
      const ref = q.ref_name || ctx.project.default_branch || 'main';
      const range = parseRange(ref);
      if (!range) throw failure('ref_name is invalid');
      const shas = await Promise.all(range.sides.map((s) => resolveRevision(ctx.repo, s)));
      revs = shas.every((s) => s) ? [range.op ? `${shas[0]}${range.op}${shas[1]}` : shas[0]!] : null;
    }

    let shas: string[] = [];
    if (revs) {
      const args = ['log', '--format=%H', `--skip=${(page - 1) * perPage}`, `--max-count=${perPage + 1}`];
      if (q.author) args.push(`--author=${q.author}`);
      if (until !== null) args.push(`--until=@${until} +0000`);
      if (since !== null) args.push(`--since=@${since} +0000`);
      if (q.all) args.push('--all');
      if (q.first_parent) args.push('--first-parent');
      if (q.order === 'topo') args.push('--topo-order');
      args.push(...revs, '--');
      if (path) args.push(path);
      // the revisions are commit ids unless `all` (the refs): such a page never changes and is kept
      shas = await historyPage(ctx.repo, args, !q.all).catch((e: unknown) => {
        // author is a regular expression (git's basic one, as Gitaly passes it): one git cannot compile is the caller's
        if (q.author && e instanceof GitError && e.stderr.startsWith("fatal: header, '")) throw Errors.param('author is invalid');
        throw e;
      });
    }
    const hasNext = shas.length > perPage;
    if (hasNext) shas = shas.slice(0, perPage);
    // Gitaly lists `all` with --reverse: the page's commits, oldest first
    if (q.all) shas.reverse();

    const commits = (await Promise.all(shas.map((s) => ctx.repo.commit(s)))).filter((x): x is Commit => x !== null);
    const stats = q.with_stats ? await commitStats(ctx.repo, commits) : null;
    reply.headers(offsetHeaders(c.config.externalUrl, pageReq, page, perPage, null, hasNext));
    return commits.map((commit) => {
      const entity = commitBasic(commit, ctx.webUrl);
      // trailers are parsed only on request (Gitaly's FindCommits `trailers`)
      if (!q.trailers) {
        entity.trailers = {};
        entity.extended_trailers = {};
      }
      return stats ? { ...entity, stats: stats.get(commit.sha)! } : entity;
    });
  });

  // ---- GET /projects/:id/repository/commits/:sha -----------------------------------------------
  app.get('/api/v4/projects/:id/repository/commits/:sha', { config: read, schema: { tags: TAGS, params: ShaParams, querystring: ShowQuery } }, async (req) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const sha = ctx.repo.exists() ? await resolveRevision(ctx.repo, req.params.sha) : null;
    const commit = sha ? await ctx.repo.commit(sha) : null;
    if (!commit) throw Errors.notFound('Commit');
    const stats = req.query.stats ? (await commitStats(ctx.repo, [commit])).get(commit.sha)! : null;
    return commitDetail(ctx, commit, stats);
  });

  // ---- GET /projects/:id/repository/commits/:sha/refs ------------------------------------------
  app.get(
    '/api/v4/projects/:id/repository/commits/:sha/refs',
    { config: read, schema: { tags: TAGS, params: ShaParams, querystring: RefsQuery } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const sha = ctx.repo.exists() ? await resolveRevision(ctx.repo, req.params.sha) : null;
      if (!sha) throw Errors.notFound('Commit');
      const type = req.query.type ?? 'all';
      const patterns = type === 'branch' ? ['refs/heads/'] : type === 'tag' ? ['refs/tags/'] : ['refs/heads/', 'refs/tags/'];
      const { stdout } = await ctx.repo.run(['for-each-ref', `--contains=${sha}`, '--format=%(refname)', ...patterns]);
      const refs: { type: 'branch' | 'tag'; name: string }[] = [];
      for (const name of stdout.toString('utf8').split('\n')) {
        if (name.startsWith(BRANCH_PREFIX)) refs.push({ type: 'branch', name: name.slice(BRANCH_PREFIX.length) });
        else if (name.startsWith('refs/tags/')) refs.push({ type: 'tag', name: name.slice('refs/tags/'.length) });
      }
      // branches first, then tags (for-each-ref sorts refs/heads before refs/tags)
      const q = req.query;
      const page = paginateArray(
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id, sha: req.params.sha }), page: q.page, per_page: q.per_page },
        refs,
      );
      reply.headers(page.headers);
      return page.items;
    },
  );

  // ---- POST /projects/:id/repository/commits ---------------------------------------------------
  app.post('/api/v4/projects/:id/repository/commits', { config: write, schema: { tags: TAGS, params: IdParams, body: CreateBody } }, async (req, reply) => {
    const actor = req.actor;
    const ctx = await c.repository.context(actor, req.params.id);
    const b = req.body;

    // Grape's conditional parameters (given action: …) and mutually_exclusive
    const invalid: string[] = [];
    b.actions.forEach((a, i) => {
      const name = `actions[${i}]`;
      if (a.action === '') invalid.push(`${name}[action] is empty`);
      else if (!(COMMIT_ACTIONS as readonly string[]).includes(a.action)) invalid.push(`${name}[action] does not have a valid value`);
      if (a.action === 'move' && a.previous_path === undefined) invalid.push(`${name}[previous_path] is missing`);
      if (a.action === 'update' && !('content' in a)) invalid.push(`${name}[content] is missing`);
      if (a.action === 'chmod' && a.execute_filemode === undefined) invalid.push(`${name}[execute_filemode] is missing`);
    });
    if (b.start_branch !== undefined && b.start_sha !== undefined) invalid.push('start_branch, start_sha are mutually exclusive');
    for (const key of ['author_name', 'author_email'] as const) if (/[\0\n\r]/.test(b[key] ?? '')) invalid.push(`${key} is invalid`);
    if (invalid.length) throw Errors.param(invalid.join(', '));

    if (b.start_project !== undefined) await c.repository.checkStartProject(ctx, actor, b.start_project);
    if (!ctx.repo.exists()) throw Errors.notFound('Repository');
    // authorize_push_to_branch! (archived projects take no pushes, not even from administrators)
    if (!(await c.repository.canPushTo(ctx, actor, b.branch, await ctx.repo.isEmpty()))) throw Errors.forbidden('You are not allowed to push into this branch');

    const sha = await c.repository.commit(ctx, actor, {
      branch: b.branch,
      message: b.commit_message,
      actions: b.actions,
      startBranch: b.start_branch,
      startSha: b.start_sha,
      authorName: b.author_name,
      authorEmail: b.author_email,
      force: b.force,
    });
    const repo = ctx.repo;
    const commit = (await repo.commit(sha))!;
    const stats = b.stats === false ? null : (await commitStats(repo, [commit])).get(sha)!;
    reply.code(201);
    return commitDetail(ctx, commit, stats);
  });
}
