// One issue (GitLab's /-/issues/:iid): the header (title, state, confidentiality, author, Close / Reopen),
// the description, related merge requests, the discussion (comments and system notes, oldest first) with a
// comment form, and the sidebar: assignees, labels, milestone, due date, time tracking, confidentiality,
// participants and linked issues with the form that links another.
import type { NoteRow, UserRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import type { IssueView } from '../../../domain/issues/present.ts';
import type { WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, Markdown, PostForm, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs, StateBadge } from '../merge-requests/common.tsx';
import { type ProjectTabsNav, ProjectTabs } from '../project-tabs.tsx';
import { ConfidentialMark, IssueLabel, issueFormBase, issueHref, issuesHref, UserLink } from './common.tsx';
import { MarkdownField } from './new.tsx';

/** A linked issue as the sidebar lists it. */
export interface LinkedIssue {
  linkId: number;
  /** from this issue's side */
  linkType: 'relates_to' | 'blocks' | 'is_blocked_by';
  title: string;
  state: string;
  confidential: boolean;
  href: string;
  /** `#12` in the same project, `group/project#12` elsewhere */
  reference: string;
}

/** A merge request mentioning or closing the issue, as "Related merge requests" lists it. */
export interface RelatedMergeRequest {
  title: string;
  state: string;
  href: string;
  /** `!45` in the same project, `project!45` in the same namespace, `group/project!45` elsewhere */
  reference: string;
}

export interface IssuePageProps {
  ctx: WebCtx;
  project: ProjectRef;
  nav: ProjectTabsNav;
  view: IssueView;
  notes: NoteRow[];
  users: Map<number, UserBasicRow>;
  participants: Pick<UserRow, 'id' | 'username' | 'name' | 'avatar_url'>[];
  related: LinkedIssue[];
  /** the merge requests mentioning or closing the issue that the viewer may read */
  mergeRequests: RelatedMergeRequest[];
  /** "1d 2h", null when none is set */
  timeEstimate: string | null;
  timeSpent: string | null;
  /** the viewer may close, reopen (update_issue) */
  canUpdate: boolean;
  /** the viewer may comment */
  canComment: boolean;
  /** why not, when they may not: signed out, the project archived, the discussion locked */
  commentRefusal?: 'unauthenticated' | 'archived' | 'locked' | null;
  /** the viewer gets the issue's notifications (null: signed out) */
  subscribed: boolean | null;
  /** the viewer may link this issue to others and remove its links */
  canLink: boolean;
  commentError?: string | null;
  commentBody?: string;
}

const LINK_HEADINGS: [LinkedIssue['linkType'], string][] = [
  ['blocks', 'Blocks'],
  ['is_blocked_by', 'Is blocked by'],
  ['relates_to', 'Relates to'],
];

const mdProject = (p: ProjectRef) => ({ fullPath: p.fullPath, defaultBranch: p.defaultBranch });

function SidebarBlock(p: { title: string; id?: string; children?: Child }): SafeHtml {
  const heading = `sidebar-${p.id ?? p.title.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return (
    <section class="issue-sidebar-block" id={p.id} aria-labelledby={heading}>
      <h2 class="f6 text-bold color-fg-muted mb-2" id={heading}>
        {p.title}
      </h2>
      {p.children}
    </section>
  );
}

const None = (p: { text: string }): SafeHtml => <p class="color-fg-muted f6 mb-0">{p.text}</p>;

function Sidebar(p: IssuePageProps): SafeHtml {
  const { view } = p;
  const r = view.row;
  const base = issueFormBase(p.project, r.iid);
  const list = issuesHref(p.project);
  return (
    <aside class="issue-sidebar" aria-label="Issue details">
      <SidebarBlock title="Assignees">
        {view.assignees.length ? (
          <ul class="list-style-none">
            {view.assignees.map((u) => (
              <li class="mb-1">
                <UserLink user={u} />
              </li>
            ))}
          </ul>
        ) : (
          <None text="None" />
        )}
      </SidebarBlock>
      <SidebarBlock title="Labels">
        {view.labels.length ? (
          <div>
            {view.labels.map((l) => (
              <IssueLabel label={l} href={`${list}?${new URLSearchParams({ labels: l.title }).toString()}`} />
            ))}
          </div>
        ) : (
          <None text="None" />
        )}
      </SidebarBlock>
      <SidebarBlock title="Milestone">
        {view.milestone ? (
          <a href={new URL(view.milestone.web_url).pathname} class="f6">
            {view.milestone.title}
          </a>
        ) : (
          <None text="None" />
        )}
      </SidebarBlock>
      <SidebarBlock title="Due date">{r.due_date ? <p class="f6 mb-0">{r.due_date}</p> : <None text="None" />}</SidebarBlock>
      <SidebarBlock title="Time tracking">
        {p.timeEstimate || p.timeSpent ? (
          <dl class="f6 mb-0 issue-time">
            <dt>Estimate</dt>
            <dd>{p.timeEstimate ?? 'none'}</dd>
            <dt>Spent</dt>
            <dd>{p.timeSpent ?? 'none'}</dd>
          </dl>
        ) : (
          <None text="No estimate or time spent" />
        )}
      </SidebarBlock>
      <SidebarBlock title="Confidentiality">
        <p class="f6 mb-0">
          {r.confidential === 1
            ? 'Confidential: only project members with at least the Reporter role, the author and assignees can see this issue.'
            : 'Not confidential: everyone who can see the project can see this issue.'}
        </p>
      </SidebarBlock>
      <SidebarBlock title={`${p.participants.length} ${p.participants.length === 1 ? 'participant' : 'participants'}`} id="participants">
        <ul class="list-style-none d-flex flex-wrap" aria-label="Participants">
          {p.participants.map((u) => (
            <li class="mr-1 mb-1">
              <a href={`/${encodeURIComponent(u.username)}`} title={u.name} aria-label={u.name}>
                <Avatar url={u.avatar_url} name={u.name} size={24} />
              </a>
            </li>
          ))}
        </ul>
      </SidebarBlock>
      {p.subscribed !== null ? (
        <SidebarBlock title="Notifications">
          <PostForm ctx={p.ctx} action={`${base}/subscription`} class="d-flex flex-items-center">
            <input type="hidden" name="subscribed" value={p.subscribed ? '0' : '1'} />
            <span class="f6 flex-auto">{p.subscribed ? 'You get notified of its activity.' : 'You are not notified of its activity.'}</span>
            <button type="submit" class="btn btn-sm ml-2">
              {p.subscribed ? 'Unsubscribe' : 'Subscribe'}
            </button>
          </PostForm>
        </SidebarBlock>
      ) : null}
      <SidebarBlock title="Linked issues" id="linked-issues">
        {p.related.length ? (
          LINK_HEADINGS.map(([type, heading]) => {
            const links = p.related.filter((l) => l.linkType === type);
            if (!links.length) return null;
            return (
              <div class="mb-2">
                <h3 class="f6 text-normal color-fg-muted mb-1">{heading}</h3>
                <ul class="list-style-none" aria-label={`${heading} issues`}>
                  {links.map((l) => (
                    <li class="d-flex flex-items-start mb-1 f6 linked-issue">
                      <span class="flex-auto min-width-0">
                        {l.confidential ? <span class="sr-only">Confidential: </span> : null}
                        <a href={l.href}>{l.title}</a> <span class="color-fg-muted">{l.reference}</span>
                        {l.state === 'closed' ? <span class="Label Label--danger ml-1">Closed</span> : null}
                      </span>
                      {p.canLink ? (
                        <PostForm ctx={p.ctx} action={`${base}/links/${l.linkId}/remove`} class="ml-1">
                          <button type="submit" class="btn-octicon" aria-label={`Remove the link to ${l.reference}`} title="Remove the link">
                            ×
                          </button>
                        </PostForm>
                      ) : null}
                    </li>
                  ))}
                </ul>
              </div>
            );
          })
        ) : (
          <None text="No linked issues" />
        )}
        {p.canLink ? (
          <PostForm ctx={p.ctx} action={`${base}/links`} id="link-issue" class="mt-2">
            <label class="f6 d-block mb-1" for="link_issue_ref">
              Link an issue
            </label>
            <input class="form-control input-sm width-full mb-1" type="text" id="link_issue_ref" name="issue" placeholder="#12 or group/project#12" required />
            <label class="sr-only" for="link_issue_type">
              Relation
            </label>
            <select class="form-select select-sm mb-1" id="link_issue_type" name="link_type">
              <option value="relates_to">relates to</option>
              <option value="blocks">blocks</option>
              <option value="is_blocked_by">is blocked by</option>
            </select>
            <button type="submit" class="btn btn-sm">
              Add
            </button>
          </PostForm>
        ) : null}
      </SidebarBlock>
    </aside>
  );
}

function Discussion(p: IssuePageProps): SafeHtml {
  const base = issueFormBase(p.project, p.view.row.iid);
  return (
    <section aria-labelledby="discussion-heading" class="mt-4" id="notes">
      <h2 class="h3 mb-2" id="discussion-heading">
        Activity
      </h2>
      {p.notes.length ? (
        <ol class="list-style-none" aria-label="Comments and activity">
          {p.notes.map((n) => {
            const author = n.author_id === null ? null : (p.users.get(n.author_id) ?? null);
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
                    <UserLink user={author} /> commented{' '}
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
        <p class="color-fg-muted">No activity yet.</p>
      )}
      {p.canComment ? (
        <PostForm ctx={p.ctx} action={`${base}/notes`} id="new-note" class="mt-3">
          {p.commentError ? (
            <div class="flash flash-error mb-2" role="alert">
              {p.commentError}
            </div>
          ) : null}
          <MarkdownField id="note_body" name="body" label="Comment" value={p.commentBody ?? ''} projectId={p.project.id} rows={5} />
          <button type="submit" class="btn btn-primary">
            Comment
          </button>
        </PostForm>
      ) : p.ctx.user ? (
        <p class="mt-3 color-fg-muted">
          {p.commentRefusal === 'archived'
            ? 'This project is archived: it takes no new comments.'
            : 'The discussion is locked: only project members can comment.'}
        </p>
      ) : (
        <p class="mt-3">
          <a href={`/users/sign_in?redirect_to=${encodeURIComponent(p.ctx.url)}`}>Sign in</a> to comment.
        </p>
      )}
    </section>
  );
}

export function IssuePage(p: IssuePageProps): SafeHtml {
  const r = p.view.row;
  const base = issueFormBase(p.project, r.iid);
  const canToggle = p.canUpdate && (r.state === 'opened' || r.state === 'closed');
  return (
    <Layout
      ctx={p.ctx}
      title={`${r.title} (#${r.iid}) · Issues · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Issues', href: issuesHref(p.project) }, { text: `#${r.iid}` })}
    >
      <ProjectTabs n={p.nav} current="issues" />
      <div class="d-flex flex-items-start flex-wrap mb-3 issue-header">
        <div class="flex-auto min-width-0 mr-2">
          <h1 class="h2 issue-title">
            {r.title} <span class="color-fg-muted text-normal">#{r.iid}</span>
          </h1>
          <p class="mt-1 mr-inline-links" id="issue-state">
            <StateBadge state={r.state} large />
            {r.confidential === 1 ? <ConfidentialMark /> : null}
            Opened <TimeAgo at={r.created_at} /> by <UserLink user={p.view.author} />
            {r.state === 'closed' && p.view.closedBy ? (
              <>
                {' '}
                · closed by <UserLink user={p.view.closedBy} avatar={false} /> <TimeAgo at={r.closed_at} />
              </>
            ) : null}
          </p>
        </div>
        {p.canUpdate ? (
          <div class="d-flex flex-shrink-0">
            <a class="btn mr-2" href={`${issueHref(p.project, r.iid)}/edit`}>
              Edit
            </a>
            {canToggle ? (
              <PostForm ctx={p.ctx} action={`${base}/${r.state === 'opened' ? 'close' : 'reopen'}`}>
                <button type="submit" class="btn">
                  {r.state === 'opened' ? 'Close issue' : 'Reopen issue'}
                </button>
              </PostForm>
            ) : null}
          </div>
        ) : null}
      </div>
      <div class="d-flex flex-wrap gutter-md">
        <div class="col-12 col-md-9">
          <section class="mb-3" aria-label="Description" id="issue-description">
            {r.description ? <Markdown text={r.description} ctx={p.ctx} project={mdProject(p.project)} /> : <p class="color-fg-muted">No description.</p>}
          </section>
          <section class="Box mb-3" aria-labelledby="related-mrs-heading" id="related-merge-requests">
            <div class="Box-header py-2">
              <h2 class="Box-title f5" id="related-mrs-heading">
                Related merge requests
                {p.mergeRequests.length ? <span class="Counter ml-1">{p.mergeRequests.length}</span> : null}
              </h2>
            </div>
            {p.mergeRequests.length ? (
              <ul>
                {p.mergeRequests.map((m) => (
                  <li class="Box-row py-2 d-flex flex-items-center related-merge-request">
                    <StateBadge state={m.state} />
                    <a class="Link--primary flex-auto min-width-0" href={m.href}>
                      {m.title}
                    </a>
                    <span class="f6 color-fg-muted ml-2 text-mono">{m.reference}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <div class="Box-body f6 color-fg-muted">No merge request mentions or closes this issue yet.</div>
            )}
          </section>
          <Discussion {...p} />
        </div>
        <div class="col-12 col-md-3 mt-4 mt-md-0">
          <Sidebar {...p} />
        </div>
      </div>
    </Layout>
  );
}
