// More of GitLab's lib/api/commits.rb: cherry-pick and revert of a commit onto a branch (dry runs
// included), a commit's comments, its merge requests and its signature.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { canReadMergeRequests } from '../../../domain/merge-requests/merge-requests-query.ts';
import { cherryPickMessage, CommitChangeRefused, makeChangeCommit, revertMessage, type ChangeAction } from '../../../domain/repository/commit-change.ts';
import { commitMergeRequests, mergedMergeRequest } from '../../../domain/repository/commit-merge-requests.ts';
import type { RepoContext } from '../../../domain/repository/context.ts';
import type { CommitNoteRow } from '../../../db/schema.ts';
import type { Commit } from '../../../git/objects.ts';
import { isValidRefName } from '../../../git/refs.ts';
import { commitSignature, verifyCommit } from '../../../git/signature.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { offsetPaginate, paginateArray } from '../../../lib/pagination.ts';
import { MergeRequestBasicSchema, type MergeRequestBasicEntity } from '../entities/merge-request.entity.ts';
import { presentMergeRequests } from '../merge-requests/present.ts';
import { toUserBasic, UserBasicSchema, userViewContext } from '../entities/user.entity.ts';
import { linkParams, NullableInteger, NullableString, PaginationProps, ShaParams } from '../schemas/common.ts';
import { commitBasic } from './context.ts';

const TAGS = ['commits'];

const RevertBody = Type.Object({
  branch: Type.String({ minLength: 1 }),
  dry_run: Type.Optional(Type.Boolean({ default: false })),
});
const CherryPickBody = Type.Object({
  branch: Type.String({ minLength: 1 }),
  dry_run: Type.Optional(Type.Boolean({ default: false })),
  message: Type.Optional(Type.String()),
});
const CommentBody = Type.Object({
  note: Type.String(),
  path: Type.Optional(Type.String()),
  line: Type.Optional(Type.Integer()),
  line_type: Type.Optional(Type.Unsafe<'new' | 'old'>({ type: 'string', enum: ['new', 'old'], default: 'new' })),
});
const ListQuery = Type.Object({ ...PaginationProps });
const MergeRequestsQuery = Type.Object({ state: Type.Optional(Type.String()), ...PaginationProps });

/** Entities::CommitNote */
const CommitNoteSchema = Type.Object({
  note: Type.String(),
  path: NullableString,
  line: NullableInteger,
  line_type: NullableString,
  author: Type.Union([UserBasicSchema, Type.Null()]),
  created_at: Type.String(),
});

/** user_project.commit(params[:sha]): a SHA or a branch or tag name; 404 Commit Not Found. */
async function commitOf(ctx: RepoContext, rev: string): Promise<Commit> {
  const sha = ctx.repo.exists() ? await ctx.repo.resolveCommit(rev) : null;
  const commit = sha ? await ctx.repo.commit(sha) : null;
  if (!commit) throw Errors.notFound('Commit');
  return commit;
}

export function commitActionsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { api: 'platform' as const, auth: 'optional' as const };
  const write = { api: 'platform' as const, auth: 'user' as const };

  /** POST …/cherry_pick and …/revert: GitLab's checks in its order, then the change on the one write path. */
  async function change(actor: Actor, id: string, rev: string, action: ChangeAction, b: { branch: string; dry_run?: boolean; message?: string }) {
    if (b.branch.trim() === '') throw Errors.param('branch is empty');
    const ctx = await c.repository.context(actor, id);
    // authorize_push_to_branch!
    if (!(await c.repository.canPushTo(ctx, actor, b.branch))) throw Errors.forbidden('You are not allowed to push into this branch');
    const commit = await commitOf(ctx, rev);
    // find_branch!
    if (!isValidRefName(b.branch)) throw Errors.raw(400, { message: 'The branch refname is invalid' });
    if (!(await ctx.repo.branch(b.branch))) throw Errors.notFound('Branch');
    const dryRun = b.dry_run === true;
    const merged = await mergedMergeRequest(c, ctx, commit.sha);
    const message = b.message ?? (action === 'revert' ? revertMessage(commit, merged) : cherryPickMessage(commit, merged));
    try {
      const sha = await c.repository.commitOnBranch(ctx, actor, b.branch, (head) => makeChangeCommit(ctx, actor, { action, commit, message, dryRun }, head));
      if (dryRun || !sha) return { ctx, commit: null };
      return { ctx, commit: (await ctx.repo.commit(sha))! };
    } catch (e) {
      const extra = dryRun ? { dry_run: 'error' } : {};
      if (e instanceof CommitChangeRefused) throw Errors.raw(400, { message: e.message, error_code: e.errorCode, ...extra });
      // a refusal of the commit (commit-checks' failures) tells the dry run failed, in the same body
      if (e instanceof DomainError && e.kind === 'refused' && e.status === 400 && dryRun) throw Errors.raw(400, { message: e.detail, ...extra });
      throw e;
    }
  }

  for (const action of ['cherry_pick', 'revert'] as const) {
    const body = action === 'revert' ? RevertBody : CherryPickBody;
    app.post(
      `/api/v4/projects/:id/repository/commits/:sha/${action}`,
      { config: write, schema: { tags: TAGS, params: ShaParams, body } },
      async (req, reply) => {
        const b = req.body as { branch: string; dry_run?: boolean; message?: string };
        const { ctx, commit } = await change(req.actor, req.params.id, req.params.sha, action, b);
        if (!commit) return reply.code(200).send({ dry_run: 'success' });
        reply.code(201);
        return commitBasic(commit, ctx.webUrl);
      },
    );
  }

  // ---- comments ---------------------------------------------------------------------------------

  async function noteEntities(rows: CommitNoteRow[]) {
    const users = await c.users.basicByIds(rows.map((r) => r.author_id));
    const view = userViewContext(c.config.externalUrl, await c.settings.get());
    return rows.map((r) => {
      const author = r.author_id !== null ? users.get(r.author_id) : undefined;
      return {
        note: r.note,
        path: r.path,
        line: r.line,
        line_type: r.line_type,
        author: author ? toUserBasic(author, view) : null,
        created_at: r.created_at,
      };
    });
  }

  app.get(
    '/api/v4/projects/:id/repository/commits/:sha/comments',
    { config: read, schema: { tags: TAGS, params: ShaParams, querystring: ListQuery, response: { 200: Type.Array(CommitNoteSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const commit = await commitOf(ctx, req.params.sha);
      const q = req.query;
      const page = await offsetPaginate(
        c.db.kysely,
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id, sha: req.params.sha }), page: q.page, per_page: q.per_page },
        c.commitNotes.list(ctx, commit.sha),
      );
      reply.headers(page.headers);
      return noteEntities(page.items);
    },
  );

  app.post(
    '/api/v4/projects/:id/repository/commits/:sha/comments',
    { config: write, schema: { tags: TAGS, params: ShaParams, body: CommentBody, response: { 201: CommitNoteSchema } } },
    async (req, reply) => {
      const b = req.body;
      // given :path do requires :line, :line_type (default 'new') end
      if (b.path !== undefined && b.line === undefined) throw Errors.param('line is missing');
      const ctx = await c.repository.context(req.actor, req.params.id);
      const commit = await commitOf(ctx, req.params.sha);
      const row = await c.commitNotes.create(ctx, req.actor, commit, {
        note: b.note,
        path: b.path,
        line: b.path !== undefined ? b.line : undefined,
        line_type: b.line_type ?? 'new',
      });
      reply.code(201);
      return (await noteEntities([row]))[0];
    },
  );

  // ---- merge requests ---------------------------------------------------------------------------

  app.get(
    '/api/v4/projects/:id/repository/commits/:sha/merge_requests',
    { config: read, schema: { tags: TAGS, params: ShaParams, querystring: MergeRequestsQuery, response: { 200: Type.Array(MergeRequestBasicSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      // authorize! :read_merge_request, user_project
      if (!canReadMergeRequests(req.actor, ctx.project, ctx.access)) throw Errors.forbidden();
      const commit = await commitOf(ctx, req.params.sha);
      const q = req.query;
      const rows = await commitMergeRequests(c, ctx, commit.sha, q.state);
      const page = paginateArray(
        c.config.externalUrl,
        { path: req.url.split('?')[0], params: linkParams(q, { id: req.params.id, sha: req.params.sha }), page: q.page, per_page: q.per_page },
        rows,
      );
      reply.headers(page.headers);
      const from = { project: { id: ctx.project.id, namespace_id: ctx.project.namespace_id } };
      return (await presentMergeRequests(c, page.items, { from })) as MergeRequestBasicEntity[];
    },
  );

  // ---- signature --------------------------------------------------------------------------------

  app.get('/api/v4/projects/:id/repository/commits/:sha/signature', { config: read, schema: { tags: TAGS, params: ShaParams } }, async (req) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    const commit = await commitOf(ctx, req.params.sha);
    const sig = await commitSignature(ctx.repo, commit.sha);
    if (!sig) throw Errors.notFound('Signature');
    const check = await verifyCommit(ctx.repo, commit.sha, sig);
    // The instance keeps no GPG or SSH keys of its users: a good signature is by an unknown key.
    if (sig.type === 'PGP') {
      return {
        signature_type: 'PGP',
        verification_status: check.keyId ? 'unknown_key' : 'unverified',
        gpg_key_id: null,
        gpg_key_primary_keyid: check.keyId,
        gpg_key_user_name: null,
        gpg_key_user_email: null,
        gpg_key_subkey_id: null,
        commit_source: 'gitaly',
      };
    }
    if (sig.type === 'SSH') {
      return { signature_type: 'SSH', verification_status: check.good ? 'unknown_key' : 'unverified', key: null, commit_source: 'gitaly' };
    }
    return { signature_type: 'X509', verification_status: 'unverified', x509_certificate: null, commit_source: 'gitaly' };
  });
}
