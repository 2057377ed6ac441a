// One merge request: the header (title, state, author, source → target) and three tabs — Overview
// (description, merge status, approvals, the merge form, close/reopen, the discussion and a comment
// form), Commits and Changes (the diff rendered by diff2html).
import type { NoteRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import type { Commit } from '../../../git/objects.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, Blankslate, Markdown, PostForm, Tabs, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { CiStatus } from '../pipelines/pages.tsx';
import { mrHref, type ProjectRef, projectCrumbs, projectHref, StateBadge } from './common.tsx';

export type MergeRequestTab = 'overview' | 'commits' | 'diffs';

export interface ApprovalsView {
  approvedBy: UserBasicRow[];
  required: number;
  userHasApproved: boolean;
  userCanApprove: boolean;
}

/** What the page shows of a merge request: the fields of the API's merge request entity it reads (the route
 * hands it the entity, as `GET /projects/:id/merge_requests/:iid` answers it to the viewer). */
export interface ShownMergeRequest {
  iid: number;
  title: string;
  description: string | null;
  state: string;
  draft: boolean;
  created_at: string;
  user_notes_count: number;
  author: { username: string; name: string; avatar_url?: string | null } | null;
  source_branch: string;
  target_branch: string;
  detailed_merge_status: string;
  sha: string | null;
  merge_commit_sha: string | null;
  squash: boolean;
  force_remove_source_branch: boolean;
  /** the head pipeline (null when there is none, or the viewer may not see pipelines) */
  head_pipeline: { id: number; status: string; web_url: string } | null;
  user: { can_merge: boolean };
}

export interface MergeRequestPageProps {
  ctx: WebCtx;
  project: ProjectRef;
  mr: ShownMergeRequest;
  tab: MergeRequestTab;
  /** the viewer may close, reopen (update_merge_request) */
  canUpdate: boolean;
  /** the viewer may comment */
  canComment: boolean;
  approvals?: ApprovalsView;
  notes?: NoteRow[];
  users?: Map<number, UserBasicRow>;
  commits?: Commit[];
  /** the rendered diff of the Changes tab */
  diff?: SafeHtml;
  commentError?: string | null;
  commentBody?: string;
}

/** detailed_merge_status as a sentence (GitLab's merge widget texts, shortened). */
const STATUS_TEXT: Record<string, string> = {
  mergeable: 'Ready to merge.',
  unchecked: 'Checking whether this merge request can be merged…',
  checking: 'Checking whether this merge request can be merged…',
  preparing: 'Preparing this merge request…',
  conflict: 'Merge blocked: the source branch has conflicts with the target branch.',
  need_rebase: 'Merge blocked: the source branch must be rebased onto the target branch.',
  draft_status: 'Merge blocked: this merge request is a draft. Mark it as ready to merge it.',
  not_approved: 'Merge blocked: approvals are required before merging.',
  discussions_not_resolved: 'Merge blocked: all threads must be resolved.',
  commits_status: 'Merge blocked: the source branch does not exist.',
  ci_must_pass: 'Merge blocked: pipeline must succeed.',
  ci_still_running: 'Merge blocked: the pipeline is still running.',
  not_open: 'This merge request is not open.',
};
/** a head pipeline that ended without succeeding */
const PIPELINE_FAILED = new Set(['failed', 'canceled']);
/** the statuses where a Merge button makes sense (the merge itself checks again) */
const MERGEABLE_NOW = new Set(['mergeable', 'unchecked', 'checking', 'preparing']);

function userLink(u: { username: string; name: string; avatar_url?: string | null } | null | undefined): SafeHtml | string {
  if (!u) return 'a deleted user';
  return (
    <a class="Link--primary" href={`/${encodeURIComponent(u.username)}`}>
      <Avatar url={u.avatar_url} name={u.name} />
      {u.name}
    </a>
  );
}

function MergeBox(p: MergeRequestPageProps): SafeHtml {
  const { mr } = p;
  const status = mr.detailed_merge_status;
  const base = `/-/p/${p.project.id}/merge_requests/${mr.iid}`;
  // the head pipeline as the API's head_pipeline shows it (null when the viewer may not see pipelines)
  const pipeline = mr.head_pipeline;
  const pipelineFailed = !!pipeline && PIPELINE_FAILED.has(pipeline.status);
  // GitLab's widget: a failed pipeline that must succeed blocks the merge; one that need not is said next to it
  const text =
    mr.state === 'merged'
      ? `Merged${mr.merge_commit_sha ? ` as ${mr.merge_commit_sha.slice(0, 8)}` : ''}.`
      : mr.state === 'closed'
        ? 'Closed.'
        : status === 'ci_must_pass' && pipelineFailed
          ? 'Merge blocked: pipeline must succeed. Push a commit that fixes the failure.'
          : status === 'mergeable' && pipelineFailed
            ? `Ready to merge, but the pipeline ${pipeline.status === 'canceled' ? 'was canceled' : 'failed'}.`
            : (STATUS_TEXT[status] ?? status.replace(/_/g, ' '));
  const canMergeNow = mr.state === 'opened' && mr.user.can_merge && MERGEABLE_NOW.has(status);
  return (
    <section class="Box mb-3" aria-labelledby="merge-status-heading">
      <div class="Box-header">
        <h2 class="Box-title" id="merge-status-heading">
          Merge status
        </h2>
      </div>
      <div class="Box-body">
        <p class="mb-2" data-merge-status={status}>
          {text}
        </p>
        {pipeline ? (
          <p class="mb-2 mr-inline-links" id="head-pipeline">
            <CiStatus status={pipeline.status} /> <a href={new URL(pipeline.web_url).pathname}>Pipeline #{pipeline.id}</a> for the source branch's head.
          </p>
        ) : null}
        {p.approvals ? (
          <div class="mb-2" id="approvals">
            <p class="mb-1 mr-inline-links">
              {p.approvals.required > 0
                ? `Approvals: ${p.approvals.approvedBy.length} of ${p.approvals.required} required.`
                : p.approvals.approvedBy.length
                  ? `Approved by ${p.approvals.approvedBy.length === 1 ? 'one person' : `${p.approvals.approvedBy.length} people`}:`
                  : 'No approvals yet.'}{' '}
              {p.approvals.approvedBy.map((u, i) => (
                <span>
                  {i > 0 ? ', ' : ''}
                  {userLink(u)}
                </span>
              ))}
            </p>
            {mr.state === 'opened' && p.approvals.userCanApprove ? (
              <PostForm ctx={p.ctx} action={`${base}/approve`} class="d-inline">
                <button type="submit" class="btn btn-sm">
                  Approve
                </button>
              </PostForm>
            ) : null}
            {mr.state === 'opened' && p.approvals.userHasApproved ? (
              <PostForm ctx={p.ctx} action={`${base}/unapprove`} class="d-inline">
                <button type="submit" class="btn btn-sm">
                  Revoke approval
                </button>
              </PostForm>
            ) : null}
          </div>
        ) : null}
        {canMergeNow ? (
          <PostForm ctx={p.ctx} action={`${base}/merge`} id="merge-form">
            <div class="form-checkbox my-2">
              <label for="merge_squash">
                <input type="checkbox" id="merge_squash" name="squash" value="1" checked={mr.squash} />
                Squash commits
              </label>
            </div>
            <div class="form-checkbox my-2">
              <label for="merge_remove_source">
                <input type="checkbox" id="merge_remove_source" name="should_remove_source_branch" value="1" checked={mr.force_remove_source_branch} />
                Delete source branch
              </label>
            </div>
            <input type="hidden" name="sha" value={mr.sha ?? ''} />
            <button type="submit" class={pipelineFailed ? 'btn btn-danger' : 'btn btn-primary'}>
              Merge
            </button>
          </PostForm>
        ) : null}
      </div>
    </section>
  );
}

function Discussion(p: MergeRequestPageProps): SafeHtml {
  const notes = p.notes ?? [];
  const base = `/-/p/${p.project.id}/merge_requests/${p.mr.iid}`;
  return (
    <section aria-labelledby="discussion-heading" class="mt-4">
      <h2 class="h3 mb-2" id="discussion-heading">
        Activity
      </h2>
      {notes.length ? (
        <ol class="list-style-none" aria-label="Comments and activity">
          {notes.map((n) => {
            const author = n.author_id === null ? null : (p.users?.get(n.author_id) ?? null);
            return n.system ? (
              <li id={`note_${n.id}`} class="note note-system py-2 pl-3 f6 color-fg-muted mr-inline-links">
                <span class="text-bold">{author?.name ?? 'Someone'}</span> <Markdown text={n.body} ctx={p.ctx} project={mdProject(p.project)} />{' '}
                <a class="Link--muted" href={`#note_${n.id}`}>
                  <TimeAgo at={n.created_at} />
                </a>
              </li>
            ) : (
              <li id={`note_${n.id}`} class="note Box mb-2">
                <div class="Box-header py-2 d-flex flex-items-center">
                  <span class="flex-auto mr-inline-links">
                    {userLink(author)} commented{' '}
                    <a class="Link--muted" href={`#note_${n.id}`}>
                      <TimeAgo at={n.created_at} />
                    </a>
                  </span>
                  {n.internal ? <span class="Label Label--attention">Internal</span> : null}
                </div>
                <div class="Box-body">
                  <Markdown text={n.body} ctx={p.ctx} project={mdProject(p.project)} />
                </div>
              </li>
            );
          })}
        </ol>
      ) : (
        <p class="color-fg-muted">No comments yet.</p>
      )}
      {p.canComment ? (
        <PostForm ctx={p.ctx} action={`${base}/notes`} id="new-note" class="mt-3">
          {p.commentError ? (
            <div class="flash flash-error mb-2" role="alert">
              {p.commentError}
            </div>
          ) : null}
          <div class="FormControl FormControl--fullWidth mb-2">
            <label class="FormControl-label" for="note_body">
              Comment
            </label>
            <textarea class="form-control FormControl-textarea width-full" id="note_body" name="body" rows="5" required>
              {`\n${p.commentBody ?? ''}`}
            </textarea>
          </div>
          <button type="submit" class="btn btn-primary">
            Comment
          </button>
        </PostForm>
      ) : p.ctx.user ? null : (
        <p class="mt-3">
          <a href={`/users/sign_in?redirect_to=${encodeURIComponent(p.ctx.url)}`}>Sign in</a> to comment.
        </p>
      )}
    </section>
  );
}

const mdProject = (p: ProjectRef) => ({ fullPath: p.fullPath, defaultBranch: p.defaultBranch });

function Overview(p: MergeRequestPageProps): SafeHtml {
  const base = `/-/p/${p.project.id}/merge_requests/${p.mr.iid}`;
  return (
    <div>
      <section class="mb-3" aria-label="Description">
        {p.mr.description ? <Markdown text={p.mr.description} ctx={p.ctx} project={mdProject(p.project)} /> : <p class="color-fg-muted">No description.</p>}
      </section>
      <MergeBox {...p} />
      {p.canUpdate && (p.mr.state === 'opened' || p.mr.state === 'closed') ? (
        <PostForm ctx={p.ctx} action={`${base}/${p.mr.state === 'opened' ? 'close' : 'reopen'}`} class="mb-3">
          <button type="submit" class={p.mr.state === 'opened' ? 'btn btn-danger' : 'btn'}>
            {p.mr.state === 'opened' ? 'Close merge request' : 'Reopen merge request'}
          </button>
        </PostForm>
      ) : null}
      <Discussion {...p} />
    </div>
  );
}

function Commits(p: MergeRequestPageProps): SafeHtml {
  const commits = p.commits ?? [];
  if (!commits.length) return <Blankslate title="No commits" />;
  return (
    <ol class="Box list-style-none" aria-label="Commits">
      {commits.map((c) => (
        <li class="Box-row d-flex flex-items-center">
          <div class="flex-auto">
            <a class="Link--primary text-bold" href={`${projectHref(p.project)}/-/commit/${c.sha}`}>
              {c.message.split('\n')[0]}
            </a>
            <div class="f6 color-fg-muted">
              {c.author.name} authored <TimeAgo at={new Date(c.author.time * 1000).toISOString()} />
            </div>
          </div>
          <a class="text-mono f6" href={`${projectHref(p.project)}/-/commit/${c.sha}`} title={c.sha}>
            {c.sha.slice(0, 8)}
          </a>
        </li>
      ))}
    </ol>
  );
}

export function MergeRequestPage(p: MergeRequestPageProps): SafeHtml {
  const { mr } = p;
  const href = mrHref(p.project, mr.iid);
  return (
    <Layout
      ctx={p.ctx}
      title={`${mr.title} (!${mr.iid}) · ${p.project.fullPath}`}
      wide={p.tab === 'diffs'}
      crumbs={projectCrumbs(p.project, { text: 'Merge requests', href: `${projectHref(p.project)}/-/merge_requests` }, { text: `!${mr.iid}` })}
    >
      <div class="mb-3">
        <h1 class="h2">
          {mr.title} <span class="color-fg-muted text-normal">!{mr.iid}</span>
        </h1>
        <p class="mt-1 mr-inline-links">
          <StateBadge state={mr.state} large />
          {mr.draft ? <span class="Label Label--secondary mr-2">Draft</span> : null}
          {userLink(mr.author)} requested to merge <span class="text-mono branch-name">{mr.source_branch}</span> into{' '}
          <span class="text-mono branch-name">{mr.target_branch}</span> <TimeAgo at={mr.created_at} />
        </p>
      </div>
      <Tabs
        label="Merge request"
        tabs={[
          { href, text: 'Overview', current: p.tab === 'overview', count: mr.user_notes_count },
          { href: `${href}/commits`, text: 'Commits', current: p.tab === 'commits' },
          { href: `${href}/diffs`, text: 'Changes', current: p.tab === 'diffs' },
        ]}
      />
      {p.tab === 'overview' ? <Overview {...p} /> : p.tab === 'commits' ? <Commits {...p} /> : <div class="mr-diff">{p.diff}</div>}
    </Layout>
  );
}
