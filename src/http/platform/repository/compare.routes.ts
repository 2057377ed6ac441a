// Compare, commit diffs, contributors and merge base (GitLab lib/api/repositories.rb, lib/api/commits.rb):
// CompareService / Gitlab::Git::Compare for compare, Repository#contributors (with real line counts,
// as the spec asks), Gitlab::Git::MergeBase for merge_base. Diffs come from src/git/diff.ts.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import { diffEntity, diffLimits, emptyTree } from '../../../git/diff.ts';
import type { Repository } from '../../../git/repository.ts';
import { CommitSchema, DiffSchema } from '../entities/commit.entity.ts';
import { Errors } from '../../../lib/errors.ts';
import { paginateArray } from '../../../lib/pagination.ts';
import { IdParams, linkParams, PaginationProps, ShaParams } from '../schemas/common.ts';
import { compareCommits, keptDiff, mergeBase } from '../../../domain/repository/compare.ts';
import { resolveRef } from '../../../domain/repository/context.ts';
import { commitBasic, type CommitEntity } from './context.ts';

const TAGS = ['repositories'];

const CompareSchema = Type.Object({
  commit: Type.Union([CommitSchema, Type.Null()]),
  commits: Type.Array(CommitSchema),
  diffs: Type.Array(DiffSchema),
  compare_timeout: Type.Boolean(),
  compare_same_ref: Type.Boolean(),
  web_url: Type.String(),
});

const ContributorSchema = Type.Object({
  name: Type.String(),
  email: Type.String(),
  commits: Type.Integer(),
  additions: Type.Integer(),
  deletions: Type.Integer(),
});

// from and to are checked in the handler, after the project (Grape runs authorize_read_code! in a
// `before` block, ahead of parameter validation: an invisible project is a 404 either way).
const CompareQuery = Type.Object({
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  from_project_id: Type.Optional(Type.Integer()),
  straight: Type.Optional(Type.Boolean({ default: false })),
  unidiff: Type.Optional(Type.Boolean({ default: false })),
});

const CommitDiffQuery = Type.Object({
  unidiff: Type.Optional(Type.Boolean({ default: false })),
  ...PaginationProps,
});

const ContributorsQuery = Type.Object({
  ref: Type.Optional(Type.String()),
  order_by: Type.Optional(Type.Unsafe<'email' | 'name' | 'commits'>({ type: 'string', enum: ['email', 'name', 'commits'], default: 'commits' })),
  sort: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], default: 'asc' })),
  ...PaginationProps,
});

interface Contributor {
  name: string;
  email: string;
  commits: number;
  additions: number;
  deletions: number;
}

const blank = (s: string | null): boolean => s === null || /^\s*$/u.test(s);

/**
 * Repository#contributors: the latest 2000 non-merge commits of `sha` grouped by author email
 * (first seen, newest first), the name being the first non-blank author name; additions and
 * deletions summed from `--numstat` (binary files count 0).
 */
async function contributors(repo: Repository, sha: string): Promise<Contributor[]> {
  const r = await repo.run(['log', '--no-merges', '--max-count=2000', '--numstat', '--no-color', '--format=%x00%an%x00%ae', sha, '--'], { maxBytes: 1 << 30 });
  const byEmail = new Map<string, { name: string | null; email: string; commits: number; additions: number; deletions: number }>();
  let cur: { name: string | null; email: string; commits: number; additions: number; deletions: number } | null = null;
  for (const line of r.stdout.toString('utf8').split('\n')) {
    if (line.charCodeAt(0) === 0) {
      const [, name, email] = line.split('\0');
      cur = byEmail.get(email) ?? null;
      if (!cur) {
        cur = { name: null, email, commits: 0, additions: 0, deletions: 0 };
        byEmail.set(email, cur);
      }
      if (blank(cur.name)) cur.name = name;
      cur.commits++;
      continue;
    }
    if (!cur || !line) continue;
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(line);
    if (!m) continue;
    if (m[1] !== '-') cur.additions += Number(m[1]);
    if (m[2] !== '-') cur.deletions += Number(m[2]);
  }
  return [...byEmail.values()].map((x) => ({ ...x, name: x.name ?? '' }));
}

/** Ruby's String#casecmp: ASCII case folded, then byte order. */
function casecmp(a: string, b: string): number {
  const fold = (s: string) =>
    Buffer.from(
      s.replace(/[A-Z]/g, (ch) => ch.toLowerCase()),
      'utf8',
    );
  return Buffer.compare(fold(a), fold(b));
}

/** Commit.order_by: case-insensitive names and emails, numeric commits; desc swaps the operands. */
function orderContributors(list: Contributor[], orderBy: 'email' | 'name' | 'commits', sort: 'asc' | 'desc'): Contributor[] {
  const cmp = (a: Contributor, b: Contributor) => (orderBy === 'commits' ? a.commits - b.commits : casecmp(a[orderBy], b[orderBy]));
  return [...list].sort((a, b) => (sort === 'desc' ? cmp(b, a) : cmp(a, b)));
}

/** Ruby's `str.split(',')`: trailing empty fields dropped. */
function rubySplitComma(s: string): string[] {
  const parts = s.split(',');
  while (parts.length && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/**
 * `refs` as Rack and Grape read it: `refs[]=a&refs[]=b` is an array, a plain `refs=a&refs=b` keeps only
 * the last value; every value may itself be comma-separated (CommaSeparatedToArray). undefined when
 * absent, null when given in a shape Grape cannot coerce (`refs[x]=…`).
 */
function refsParam(url: string): string[] | undefined | null {
  const i = url.indexOf('?');
  if (i < 0) return undefined;
  let values: string[] | undefined;
  let bracket = false;
  for (const [k, v] of new URLSearchParams(url.slice(i + 1))) {
    if (k === 'refs') {
      values = [v];
      bracket = false;
    } else if (k === 'refs[]') {
      if (!values || !bracket) values = [];
      bracket = true;
      values.push(v);
    } else if (k.startsWith('refs[')) {
      return null;
    }
  }
  return values?.flatMap((v) => rubySplitComma(v).map((x) => x.trim()));
}

export function compareRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'optional' as const };

  app.get(
    '/api/v4/projects/:id/repository/compare',
    { config, schema: { tags: TAGS, params: IdParams, querystring: CompareQuery, response: { 200: CompareSchema } } },
    async (req) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const q = req.query;
      const missing = (['from', 'to'] as const).filter((k) => q[k] === undefined);
      if (missing.length) throw Errors.param(missing.map((k) => `${k} is missing`).join(', '));
      // No forks: the only project sharing this repository's objects is the project itself.
      if (q.from_project_id !== undefined && q.from_project_id !== ctx.project.id) {
        throw Errors.raw(400, { message: `Target project id:${q.from_project_id} is not a fork of project id:${req.params.id}` });
      }
      const repo = ctx.repo;
      const [fromSha, toSha] = await Promise.all([repo.resolveCommit(q.from!.trim()), repo.resolveCommit(q.to!)]);
      if (!fromSha || !toSha) throw Errors.notFound('Ref');
      const straight = q.straight === true;

      if (fromSha === toSha) {
        return {
          commit: null,
          commits: [],
          diffs: [],
          compare_timeout: false,
          compare_same_ref: true,
          web_url: `${ctx.webUrl}/-/compare/${fromSha}...${toSha}`,
        };
      }

      const { base, diff, commits } = await compareCommits(repo, fromSha, toSha, straight, diffLimits(await c.settings.get(), false));
      const entities: CommitEntity[] = commits.map((x) => commitBasic(x, ctx.webUrl));
      return {
        commit: entities.length ? entities[entities.length - 1] : null,
        commits: entities,
        diffs: diff.files.map((f) => diffEntity(f, q.unidiff === true)),
        compare_timeout: diff.overflow,
        compare_same_ref: false,
        web_url: `${ctx.webUrl}/-/compare/${base ?? fromSha}...${toSha}`,
      };
    },
  );

  app.get(
    '/api/v4/projects/:id/repository/commits/:sha/diff',
    { config, schema: { tags: ['commits'], params: ShaParams, querystring: CommitDiffQuery, response: { 200: Type.Array(DiffSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const q = req.query;
      const sha = await ctx.repo.resolveCommit(req.params.sha);
      const commit = sha ? await ctx.repo.commit(sha) : null;
      if (!commit) throw Errors.notFound('Commit');
      // against the first parent; a root commit against the empty tree
      const diff = await keptDiff(ctx.repo, commit.parents[0] ?? emptyTree(commit.sha), commit.sha, diffLimits(await c.settings.get(), true));
      const all = diff.files.map((f) => diffEntity(f, q.unidiff === true));
      const page = paginateArray(
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id, sha: req.params.sha }), page: q.page, per_page: q.per_page },
        all,
      );
      reply.headers(page.headers);
      return page.items;
    },
  );

  app.get(
    '/api/v4/projects/:id/repository/contributors',
    { config, schema: { tags: TAGS, params: IdParams, querystring: ContributorsQuery, response: { 200: Type.Array(ContributorSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const q = req.query;
      let list: Contributor[] = [];
      const sha = await resolveRef(ctx, q.ref);
      if (sha) {
        try {
          list = orderContributors(await contributors(ctx.repo, sha), q.order_by ?? 'commits', q.sort ?? 'asc');
        } catch {
          throw Errors.notFound();
        }
      } else if (q.ref || !(await ctx.repo.isEmpty())) {
        // GitLab: any failure of Repository#contributors is a plain 404
        throw Errors.notFound();
      }
      const page = paginateArray(
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id }), page: q.page, per_page: q.per_page },
        list,
      );
      reply.headers(page.headers);
      return page.items;
    },
  );

  app.get('/api/v4/projects/:id/repository/merge_base', { config, schema: { tags: TAGS, params: IdParams, response: { 200: CommitSchema } } }, async (req) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const refs = refsParam(req.url);
    if (refs === undefined) throw Errors.param('refs is missing');
    if (refs === null) throw Errors.param('refs is invalid');
    if (refs.length < 2) throw Errors.raw(400, { message: 'Provide at least 2 refs' });
    const shas = await Promise.all(refs.map((r) => ctx.repo.resolveCommit(r)));
    const unknown = [...new Set(refs.filter((_, i) => !shas[i]))];
    if (unknown.length) throw Errors.raw(400, { message: `Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}` });
    const base = await mergeBase(ctx.repo, shas as string[]);
    const commit = base ? await ctx.repo.commit(base) : null;
    if (!commit) throw Errors.notFound('Merge Base');
    return commitBasic(commit, ctx.webUrl);
  });
}
