// One merge request (GitLab lib/api/merge_requests.rb, lib/api/resource_*_events.rb): create, get,
// update, delete; its commits, changes and diffs, participants, reviewers, resource events, pipelines
// and time stats. The list is list.routes.ts; merging merge.routes.ts; notes notes.routes.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import { type FoundMergeRequest, parseDuration } from '../../../domain/merge-requests/merge-requests.service.ts';
import { diffEntity, diffLimits } from '../../../git/diff.ts';
import { keptDiff } from '../../../domain/repository/compare.ts';
import { CommitSchema, DiffSchema } from '../entities/commit.entity.ts';
import { Errors } from '../../../lib/errors.ts';
import { paginateArray } from '../../../lib/pagination.ts';
import { commitBasic } from '../repository/context.ts';
import { toLabelDetails } from '../entities/label.entity.ts';
import { PipelineBasicSchema, PipelineSchema, toPipeline, toPipelineBasic } from '../entities/pipeline.entity.ts';
import { humanTime } from '../../../domain/merge-requests/rules.ts';
import { MergeRequestSchema, MilestoneRefSchema, TimeStatsSchema, toMilestoneRef } from '../entities/merge-request.entity.ts';
import { toUserRef, UserRefSchema, userViewContext } from '../entities/user.entity.ts';
import { IdParams, linkParams, MergeRequestParams, NullableString, PaginationProps } from '../schemas/common.ts';
import { presentMergeRequest } from './present.ts';
import { normaliseIssuableParams } from '../schemas/issuable-params.ts';

const TAGS = ['merge_requests'];

const EventParams = (name: string) => Type.Object({ id: Type.String(), merge_request_iid: Type.Integer(), [name]: Type.Integer() });

const StringList = () => Type.Optional(Type.Array(Type.String()));
const IntList = () => Type.Optional(Type.Array(Type.Integer()));

/** Grape's optional_params of create and update (lib/api/merge_requests.rb). */
const optionalParams = {
  description: Type.Optional(Type.String()),
  assignee_id: Type.Optional(Type.Integer()),
  assignee_ids: IntList(),
  reviewer_ids: IntList(),
  labels: StringList(),
  add_labels: StringList(),
  remove_labels: StringList(),
  milestone_id: Type.Optional(Type.Integer()),
  remove_source_branch: Type.Optional(Type.Boolean()),
  allow_collaboration: Type.Optional(Type.Boolean()),
  allow_maintainer_to_push: Type.Optional(Type.Boolean()),
  squash: Type.Optional(Type.Boolean()),
  merge_after: Type.Optional(Type.String()),
};

const CreateBody = Type.Object({
  title: Type.String(),
  source_branch: Type.String(),
  target_branch: Type.String(),
  target_project_id: Type.Optional(Type.Integer()),
  ...optionalParams,
});

const STATE_EVENTS = ['close', 'reopen'] as const;
const UpdateBody = Type.Object({
  title: Type.Optional(Type.String()),
  target_branch: Type.Optional(Type.String()),
  state_event: Type.Optional(Type.Unsafe<(typeof STATE_EVENTS)[number]>({ type: 'string', enum: [...STATE_EVENTS] })),
  discussion_locked: Type.Optional(Type.Boolean()),
  ...optionalParams,
});

/** update's at_least_one_of, in Grape's order (reference §8). */
const UPDATE_KEYS = [
  'assignee_id',
  'assignee_ids',
  'reviewer_ids',
  'description',
  'labels',
  'add_labels',
  'remove_labels',
  'milestone_id',
  'remove_source_branch',
  'allow_collaboration',
  'allow_maintainer_to_push',
  'squash',
  'target_branch',
  'title',
  'state_event',
  'discussion_locked',
  'merge_after',
] as const;

const ShowQuery = Type.Object({
  render_html: Type.Optional(Type.Boolean()),
  include_diverged_commits_count: Type.Optional(Type.Boolean()),
  include_rebase_in_progress: Type.Optional(Type.Boolean()),
});
const PageQuery = Type.Object(PaginationProps);
const DiffsQuery = Type.Object({ ...PaginationProps, unidiff: Type.Optional(Type.Boolean()) });
const ChangesQuery = Type.Object({ access_raw_diffs: Type.Optional(Type.Boolean()), unidiff: Type.Optional(Type.Boolean()) });

const ChangesSchema = Type.Object({ ...MergeRequestSchema.properties, changes: Type.Array(DiffSchema), overflow: Type.Boolean() });

const VersionProps = {
  id: Type.Integer(),
  head_commit_sha: Type.String(),
  base_commit_sha: NullableString,
  start_commit_sha: NullableString,
  created_at: Type.String(),
  merge_request_id: Type.Integer(),
  state: Type.String(),
  real_size: Type.String(),
  patch_id_sha: NullableString,
};
const VersionSchema = Type.Object(VersionProps);
const VersionFullSchema = Type.Object({ ...VersionProps, commits: Type.Array(CommitSchema), diffs: Type.Array(DiffSchema) });
const ReviewerSchema = Type.Object({ user: UserRefSchema, state: Type.String(), created_at: Type.String() });

export function mergeRequestsRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const mrs = c.mergeRequests;
  const read = { api: 'platform' as const, auth: 'optional' as const };
  // authenticate_non_get!: writes need a user before anything else (401)
  const write = { api: 'platform' as const, auth: 'user' as const };
  const base = '/api/v4/projects/:id/merge_requests';
  const one = `${base}/:merge_request_iid`;
  const pathOf = (req: FastifyRequest) => req.url.split('?')[0];
  const users = async () => userViewContext(c.config.externalUrl, await c.settings.get());
  const find = (req: { actor: Actor; params: { id: string; merge_request_iid: number } }) => mrs.find(req.actor, req.params.id, req.params.merge_request_iid);
  const present = (actor: Actor, found: FoundMergeRequest, opts: Parameters<typeof presentMergeRequest>[3] = {}) => presentMergeRequest(c, actor, found, opts);

  app.post(
    base,
    {
      config: write,
      preValidation: normaliseIssuableParams,
      schema: { tags: TAGS, params: IdParams, body: CreateBody, response: { 201: MergeRequestSchema } },
    },
    async (req, reply) => {
      const b = req.body;
      const found = await mrs.create(req.actor, req.params.id, {
        title: b.title,
        source_branch: b.source_branch,
        target_branch: b.target_branch,
        target_project_id: b.target_project_id,
        description: b.description,
        assignee_id: b.assignee_id,
        assignee_ids: b.assignee_ids,
        reviewer_ids: b.reviewer_ids,
        labels: b.labels,
        milestone_id: b.milestone_id,
        remove_source_branch: b.remove_source_branch,
        squash: b.squash,
        allow_collaboration: b.allow_collaboration,
        allow_maintainer_to_push: b.allow_maintainer_to_push,
      });
      reply.code(201);
      const body = await present(req.actor, found);
      // MergeRequests::AfterCreateService: the first mergeability check, in the background
      c.merges.checkIfUnchecked(found.mr);
      return body;
    },
  );

  app.get(
    one,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: ShowQuery, response: { 200: MergeRequestSchema } } },
    async (req) => {
      const q = req.query;
      const found = await find(req);
      const body = await present(req.actor, found, {
        renderHtml: q.render_html === true,
        includeDivergedCommitsCount: q.include_diverged_commits_count === true,
        includeRebaseInProgress: q.include_rebase_in_progress === true,
      });
      // check_mergeability(async: true) for callers who may update it (can_check_mergeability?)
      if (req.actor.user && (req.actor.isAdmin || found.access.abilities.has('push_code'))) c.merges.checkIfUnchecked(found.mr);
      return body;
    },
  );

  app.put(
    one,
    {
      config: write,
      preValidation: normaliseIssuableParams,
      schema: { tags: TAGS, params: MergeRequestParams, body: UpdateBody, response: { 200: MergeRequestSchema } },
    },
    async (req) => {
      const b = req.body as Record<string, unknown> & typeof req.body;
      if (!UPDATE_KEYS.some((k) => b[k] !== undefined)) {
        throw Errors.param(`${UPDATE_KEYS.join(', ')} are missing, at least one parameter must be provided`);
      }
      const found = await find(req);
      const updated = await mrs.update(req.actor, found, {
        title: b.title,
        description: b.description,
        state_event: b.state_event,
        labels: b.labels,
        add_labels: b.add_labels,
        remove_labels: b.remove_labels,
        assignee_id: b.assignee_id,
        assignee_ids: b.assignee_ids,
        reviewer_ids: b.reviewer_ids,
        milestone_id: b.milestone_id === undefined ? undefined : b.milestone_id === 0 ? null : b.milestone_id,
        target_branch: b.target_branch,
        discussion_locked: b.discussion_locked,
        squash: b.squash,
        remove_source_branch: b.remove_source_branch,
        allow_collaboration: b.allow_collaboration,
        allow_maintainer_to_push: b.allow_maintainer_to_push,
      });
      const body = await present(req.actor, updated);
      // a new target branch or a reopened merge request is checked again
      c.merges.checkIfUnchecked(updated.mr);
      return body;
    },
  );

  app.delete(one, { config: write, schema: { tags: TAGS, params: MergeRequestParams } }, async (req, reply) => {
    await mrs.destroy(req.actor, await find(req));
    return reply.code(204).send();
  });

  // Subscribable (lib/api/subscriptions.rb): 201 with the merge request, 304 when nothing changes.
  for (const [path, on] of [
    ['subscribe', true],
    ['unsubscribe', false],
  ] as const) {
    app.post(
      `${one}/${path}`,
      { config: write, schema: { tags: TAGS, params: MergeRequestParams, response: { 201: MergeRequestSchema, 304: Type.Null() } } },
      async (req, reply) => {
        const found = await find(req);
        if (!(await mrs.setSubscription(req.actor, found, on))) return reply.code(304).send(null);
        reply.code(201);
        return present(req.actor, found);
      },
    );
  }

  app.get(
    `${one}/commits`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: PageQuery, response: { 200: Type.Array(CommitSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      const webUrl = `${c.config.externalUrl}/${found.namespace.full_path}/${found.project.path}`;
      const commits = (await mrs.commits(found)).map((x) => commitBasic(x, webUrl));
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, commits);
      reply.headers(page.headers);
      return page.items;
    },
  );

  // Deprecated in favour of /diffs: the merge request with its changes (limited unless access_raw_diffs).
  app.get(
    `${one}/changes`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: ChangesQuery, response: { 200: ChangesSchema } } },
    async (req) => {
      const found = await find(req);
      const entity = await present(req.actor, found);
      const source = await mrs.diffSource(found);
      if (!source) return { ...entity, changes: [], overflow: false };
      const limits = diffLimits(await c.settings.get(), req.query.access_raw_diffs === true);
      if (req.query.access_raw_diffs === true) limits.enforce = false;
      const diff = await keptDiff(source.repo, source.base, source.head, limits);
      return { ...entity, changes: diff.files.map((f) => diffEntity(f, req.query.unidiff === true)), overflow: diff.overflow };
    },
  );

  app.get(
    `${one}/diffs`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: DiffsQuery, response: { 200: Type.Array(DiffSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      const source = await mrs.diffSource(found);
      const all = source
        ? (await keptDiff(source.repo, source.base, source.head, { ...diffLimits(await c.settings.get(), true), enforce: false })).files.map((f) =>
            diffEntity(f, req.query.unidiff === true),
          )
        : [];
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, all);
      reply.headers(page.headers);
      return page.items;
    },
  );

  app.get(
    `${one}/participants`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: PageQuery, response: { 200: Type.Array(UserRefSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      const ctx = await users();
      const all = (await mrs.participants(found)).map((u) => toUserRef(u, ctx));
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, all);
      reply.headers(page.headers);
      return page.items;
    },
  );

  app.get(
    `${one}/reviewers`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: PageQuery, response: { 200: Type.Array(ReviewerSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      const ctx = await users();
      const all = (await mrs.reviewers(found)).map((r) => ({ user: toUserRef(r.user, ctx), state: r.state, created_at: r.created_at }));
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, all);
      reply.headers(page.headers);
      return page.items;
    },
  );

  // GET: the merge request's pipelines (its source branch's and its own, in the projects whose pipelines the caller
  // reads), PipelineBasic; POST: a merge request pipeline now (MergeRequests::CreatePipelineService: in the target
  // project, or in the fork of a merge request from one), Entities::Ci::Pipeline
  app.get(
    `${one}/pipelines`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: PageQuery, response: { 200: Type.Array(PipelineBasicSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      await c.ci.pipelines.project(req.actor, req.params.id, 'read');
      // each pipeline's URL names the project it runs in (the target, or a fork)
      const all = (await c.mergeRequestPipelines.list(req.actor, found)).map((p) => toPipelineBasic(p.pipeline, `${c.config.externalUrl}/${p.projectPath}`));
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, all);
      reply.headers(page.headers);
      return page.items;
    },
  );
  // 200 with the pipeline (GitLab's `status :ok`), or with `async`, 202 and no body: the pipeline is created by a job
  app.post(
    `${one}/pipelines`,
    {
      config: write,
      schema: {
        tags: TAGS,
        params: MergeRequestParams,
        body: Type.Object({ async: Type.Optional(Type.Boolean()) }),
        response: { 200: PipelineSchema, 202: Type.Null() },
      },
    },
    async (req, reply) => {
      const found = await find(req);
      if (req.body.async) {
        await c.mergeRequestPipelines.createLater(req.actor, found);
        return reply.code(202).send(undefined as unknown as null); // no body at all (null would be sent as `null`)
      }
      const { pipeline: row, project, namespace } = await c.mergeRequestPipelines.create(req.actor, found);
      const web = `${c.config.externalUrl}/${namespace.full_path}/${project.path}`;
      const user = row.user_id ? (await c.users.basicByIds([row.user_id])).get(row.user_id) : undefined;
      return reply.code(200).send(toPipeline(row, web, user, userViewContext(c.config.externalUrl, await c.settings.get())));
    },
  );

  // ---- diff versions (lib/api/merge_request_diffs.rb) ----------------------------------------------
  // No diff history is kept: a merge request has one version, its current diff, named by its own id.

  const versionOf = async (found: FoundMergeRequest) => {
    const { mr } = found;
    if (!mr.sha) return null;
    const git = await mrs.gitOf(found);
    const start = mr.state === 'opened' && git.target ? ((await git.target.resolveCommit(mr.target_branch)) ?? mr.diff_base_sha) : mr.diff_base_sha;
    return {
      id: mr.id,
      head_commit_sha: mr.sha,
      base_commit_sha: mr.diff_base_sha,
      start_commit_sha: start,
      created_at: mr.updated_at,
      merge_request_id: mr.id,
      state: 'collected',
      real_size: (await mrs.changesCountOf(found)) ?? '0',
      patch_id_sha: null,
    };
  };

  app.get(
    `${one}/versions`,
    { config: read, schema: { tags: TAGS, params: MergeRequestParams, querystring: PageQuery, response: { 200: Type.Array(VersionSchema) } } },
    async (req, reply) => {
      const found = await find(req);
      const v = await versionOf(found);
      const page = paginateArray(c.config.externalUrl, { path: pathOf(req), params: linkParams(req.query, req.params), ...req.query }, v ? [v] : []);
      reply.headers(page.headers);
      return page.items;
    },
  );
  app.get(
    `${one}/versions/:version_id`,
    { config: read, schema: { tags: TAGS, params: EventParams('version_id'), querystring: ChangesQuery, response: { 200: VersionFullSchema } } },
    async (req) => {
      const params = req.params as { id: string; merge_request_iid: number; version_id: number };
      const found = await mrs.find(req.actor, params.id, params.merge_request_iid);
      const v = await versionOf(found);
      if (!v || v.id !== params.version_id) throw Errors.recordNotFound();
      const webUrl = `${c.config.externalUrl}/${found.namespace.full_path}/${found.project.path}`;
      const source = await mrs.diffSource(found);
      const diff = source ? await keptDiff(source.repo, source.base, source.head, { ...diffLimits(await c.settings.get(), true), enforce: false }) : null;
      return {
        ...v,
        commits: (await mrs.commits(found)).map((x) => commitBasic(x, webUrl)),
        diffs: diff ? diff.files.map((f) => diffEntity(f, req.query.unidiff === true)) : [],
      };
    },
  );
}
