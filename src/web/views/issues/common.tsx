// Pieces the issue pages share: where an issue lives, a label in its colour, a person's link, a row of the
// issues list and the confidential mark.
import type { LabelRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import type { IssueView } from '../../../domain/issues/present.ts';
import { raw, type SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, TimeAgo } from '../components.tsx';
import { prefersDarkText } from '../../../domain/labels/label-color.ts';
import { type ProjectRef, projectHref } from '../merge-requests/common.tsx';

export const issuesHref = (p: Pick<ProjectRef, 'fullPath'>): string => `${projectHref(p)}/-/issues`;
export const issueHref = (p: Pick<ProjectRef, 'fullPath'>, iid: number): string => `${issuesHref(p)}/${iid}`;
/** The forms of one issue post here (`/-/p/:project_id/issues/:iid/…`). */
export const issueFormBase = (p: Pick<ProjectRef, 'id'>, iid: number): string => `/-/p/${p.id}/issues/${iid}`;

/**
 * An issue's reference as GitLab writes it from where it is shown (Issue#to_reference): `#12` in its own project,
 * `app#12` in the group that holds the project, the project's full path anywhere else (`from` null: no place).
 */
export function issueReference(projectFullPath: string, iid: number, from: string | null): string {
  if (projectFullPath === from) return `#${iid}`;
  const cut = projectFullPath.lastIndexOf('/');
  if (from !== null && projectFullPath.slice(0, cut) === from) return `${projectFullPath.slice(cut + 1)}#${iid}`;
  return `${projectFullPath}#${iid}`;
}

const HEX = /^#(?:[0-9a-f]{3}){1,2}$/i;

/** A speech bubble (decorative: the link says how many comments). */
const COMMENT_ICON = raw(
  '<svg class="issue-comment-icon" aria-hidden="true" width="14" height="14" viewBox="0 0 16 16" fill="currentColor"><path d="M1.75 1h12.5c.966 0 1.75.784 1.75 1.75v8.5A1.75 1.75 0 0 1 14.25 13H8.06l-2.573 2.573A1.458 1.458 0 0 1 3 14.543V13H1.75A1.75 1.75 0 0 1 0 11.25v-8.5C0 1.784.784 1 1.75 1Z"/></svg>',
);

/** The text colour of a label: pure black or white, whichever contrasts more with its background. */
export function labelTextColor(color: string): string {
  return prefersDarkText(color) ? '#000000' : '#ffffff';
}

/** A label as a pill in its own colour (a colour that is not one falls back to Primer's plain label). */
export function IssueLabel(p: { label: Pick<LabelRow, 'title' | 'color' | 'description'>; href?: string }): SafeHtml {
  const { label } = p;
  const style = HEX.test(label.color) ? `background-color:${label.color};color:${labelTextColor(label.color)};border-color:transparent` : undefined;
  const pill = (
    <span class="Label issue-label mr-1" style={style} title={label.description ?? undefined}>
      {label.title}
    </span>
  );
  return p.href ? (
    <a class="issue-label-link" href={p.href}>
      {pill}
    </a>
  ) : (
    pill
  );
}

/** A person, linked to their profile (with their avatar). */
export function UserLink(p: { user: Pick<UserBasicRow, 'username' | 'name' | 'avatar_url'> | null | undefined; avatar?: boolean }): SafeHtml {
  const u = p.user;
  if (!u) return <span>a deleted user</span>;
  return (
    <a class="Link--primary" href={`/${encodeURIComponent(u.username)}`}>
      {p.avatar === false ? null : <Avatar url={u.avatar_url} name={u.name} />}
      {u.name}
    </a>
  );
}

/** The eye-slash mark of a confidential issue, with words for those who do not see the icon. */
export function ConfidentialMark(): SafeHtml {
  return (
    <span class="Label Label--attention mr-1" title="Confidential: only project members with at least the Reporter role, the author and assignees can see it">
      Confidential
    </span>
  );
}

/**
 * One issue of a list: title, reference, labels, opened by/when, milestone, due date, assignees and comments. The
 * reference is as seen from `from` (the list's project or group; null: the dashboard's, every project's).
 */
export function IssueRow(p: { view: IssueView; labelHref: (title: string) => string; from: string | null }): SafeHtml {
  const r = p.view.row;
  const project = { fullPath: p.view.project.fullPath };
  const closed = r.state === 'closed';
  return (
    <li class="Box-row d-flex flex-items-start issue-row" id={`issue_${r.id}`}>
      <div class="flex-auto min-width-0">
        <div>
          {r.confidential === 1 ? <ConfidentialMark /> : null}
          <a class="Link--primary text-bold mr-1" href={issueHref(project, r.iid)}>
            {r.title}
          </a>
          {p.view.labels.map((l) => (
            <IssueLabel label={l} href={p.labelHref(l.title)} />
          ))}
        </div>
        <div class="f6 color-fg-muted mt-1 issue-meta">
          <span>{issueReference(project.fullPath, r.iid, p.from)}</span> · opened <TimeAgo at={r.created_at} /> by{' '}
          <UserLink user={p.view.author} avatar={false} />
          {closed ? (
            <>
              {' '}
              · <span class="Label Label--danger">Closed</span>
            </>
          ) : null}
          {p.view.milestone ? (
            <>
              {' '}
              · <span title="Milestone">Milestone: {p.view.milestone.title}</span>
            </>
          ) : null}
          {r.due_date ? (
            <>
              {' '}
              · <span>Due {r.due_date}</span>
            </>
          ) : null}
        </div>
      </div>
      <div class="d-flex flex-items-center flex-shrink-0 ml-2 f6 color-fg-muted">
        {p.view.assignees.length ? (
          <span class="mr-3 issue-assignees" data-assignees={p.view.assignees.map((a) => a.username).join(' ')}>
            <span class="sr-only">Assigned to {p.view.assignees.map((a) => a.name).join(', ')}</span>
            {p.view.assignees.map((a) => (
              <span title={a.name} aria-hidden="true">
                <Avatar url={a.avatar_url} name={a.name} />
              </span>
            ))}
          </span>
        ) : null}
        <a
          class="Link--muted"
          href={`${issueHref(project, r.iid)}#notes`}
          aria-label={`${r.user_notes_count} ${r.user_notes_count === 1 ? 'comment' : 'comments'}`}
        >
          {COMMENT_ICON} {String(r.user_notes_count)}
        </a>
      </div>
    </li>
  );
}
