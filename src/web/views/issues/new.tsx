// The new issue form, and the same form editing an issue: title, description with Write / Preview tabs (the
// preview through the markdown renderer; without JavaScript the form still submits), and — for those whose
// metadata the service keeps — labels, milestone, assignees and due date; the confidential checkbox for
// everyone. Errors are listed above the form with what the user typed kept.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { FormErrors, PostForm } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs } from '../merge-requests/common.tsx';
import { type ProjectTabsNav, ProjectTabs } from '../project-tabs.tsx';
import { IssueLabel, issueFormBase, issueHref, issuesHref } from './common.tsx';

/** What the form holds: as typed (ids and dates as strings). */
export interface NewIssueValues {
  title: string;
  description: string;
  /** label titles */
  labels: string[];
  milestone_id: string;
  assignee_ids: string[];
  /** YYYY-MM-DD or '' */
  due_date: string;
  confidential: boolean;
}

/** What the metadata fields offer. */
export interface IssueFormChoices {
  labels: { title: string; color: string; description: string | null }[];
  milestones: { id: number; title: string }[];
  users: { id: number; username: string; name: string }[];
}

/** A markdown field with Write / Preview tabs (the tabs show only with JavaScript; the textarea works alone). */
export function MarkdownField(p: { id: string; name: string; label: string; value: string; projectId: number; rows?: number }): SafeHtml {
  const preview = `${p.id}_preview`;
  return (
    <div class="FormControl FormControl--fullWidth mb-3 md-field" data-md-field>
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <div class="md-field-tabs mb-1" role="tablist" aria-label={`${p.label}: write or preview`} hidden data-issues-needs-js>
        <button type="button" class="btn-link md-field-tab" role="tab" aria-selected="true" aria-controls={`${p.id}_write`} data-md-write>
          Write
        </button>
        <button
          type="button"
          class="btn-link md-field-tab"
          role="tab"
          aria-selected="false"
          aria-controls={preview}
          data-md-preview
          hx-post="/-/markdown_preview"
          hx-include={`#${p.id}`}
          hx-vals={JSON.stringify({ project_id: String(p.projectId) })}
          hx-target={`#${preview}`}
          hx-swap="innerHTML"
        >
          Preview
        </button>
      </div>
      <div id={`${p.id}_write`} role="tabpanel" aria-label={`Write the ${p.label.toLowerCase()}`} data-md-write-panel>
        <textarea class="form-control FormControl-textarea width-full" id={p.id} name={p.name} rows={String(p.rows ?? 10)}>
          {`\n${p.value}`}
        </textarea>
      </div>
      <section
        class="md-preview markdown-preview"
        id={preview}
        role="tabpanel"
        aria-live="polite"
        aria-label={`Preview of the ${p.label.toLowerCase()}`}
        hidden
      />
      <p class="note">Markdown is supported.</p>
    </div>
  );
}

export interface IssueFormProps {
  ctx: WebCtx;
  project: ProjectRef;
  nav: ProjectTabsNav;
  values: NewIssueValues;
  /** null: the viewer's labels, milestone, assignees and due date would not be kept, so none are asked */
  choices: IssueFormChoices | null;
  errors?: string[] | null;
  /** the issue being edited; absent for a new one */
  editing?: { iid: number };
}

/** The new issue form, and the same form editing an issue. */
export function NewIssuePage(p: IssueFormProps): SafeHtml {
  const v = p.values;
  const heading = p.editing ? `Edit issue #${p.editing.iid}` : 'New issue';
  const back = p.editing ? issueHref(p.project, p.editing.iid) : issuesHref(p.project);
  const ch = p.choices;
  // a label typed elsewhere (an unknown title) stays offered, so nothing chosen is lost on a re-render
  const labels = ch
    ? [...ch.labels, ...v.labels.filter((t) => !ch.labels.some((l) => l.title === t)).map((t) => ({ title: t, color: '', description: null }))]
    : [];
  return (
    <Layout
      ctx={p.ctx}
      title={`${heading} · ${p.project.fullPath}`}
      crumbs={projectCrumbs(
        p.project,
        { text: 'Issues', href: issuesHref(p.project) },
        ...(p.editing ? [{ text: `#${p.editing.iid}`, href: back }, { text: 'Edit' }] : [{ text: 'New' }]),
      )}
    >
      <ProjectTabs n={p.nav} current="issues" />
      <h1 class="h2 mb-3">{heading}</h1>
      <FormErrors errors={p.errors} />
      <PostForm
        ctx={p.ctx}
        action={p.editing ? issueFormBase(p.project, p.editing.iid) : `/-/p/${p.project.id}/issues`}
        id={p.editing ? 'edit_issue' : 'new_issue'}
      >
        <div class="d-flex flex-wrap gutter-md">
          <div class="col-12 col-md-8">
            <div class="FormControl FormControl--fullWidth mb-3">
              <label class="FormControl-label" for="issue_title">
                Title
              </label>
              <input class="form-control FormControl-input width-full" type="text" id="issue_title" name="title" value={v.title} required maxlength="255" />
            </div>
            <MarkdownField id="issue_description" name="description" label="Description" value={v.description} projectId={p.project.id} />
            <div class="form-checkbox mb-3">
              <label for="issue_confidential">
                <input type="checkbox" id="issue_confidential" name="confidential" value="1" checked={v.confidential} />
                This issue is confidential
              </label>
              <p class="note">Only project members with at least the Reporter role, the author, and assignees can see it.</p>
            </div>
          </div>
          {ch ? (
            <div class="col-12 col-md-4">
              <fieldset class="mb-3 issue-choices">
                <legend class="text-bold mb-1">Labels</legend>
                {labels.length ? (
                  labels.map((l, i) => (
                    <div class="form-checkbox my-1">
                      <label for={`issue_label_${i}`}>
                        <input type="checkbox" id={`issue_label_${i}`} name="labels" value={l.title} checked={v.labels.includes(l.title)} />
                        <IssueLabel label={l} />
                      </label>
                    </div>
                  ))
                ) : (
                  <p class="note mt-0">This project has no labels yet.</p>
                )}
              </fieldset>
              <div class="FormControl mb-3">
                <label class="FormControl-label" for="issue_milestone_id">
                  Milestone
                </label>
                <select class="form-select FormControl-select" id="issue_milestone_id" name="milestone_id">
                  <option value="" selected={v.milestone_id === ''}>
                    No milestone
                  </option>
                  {ch.milestones.map((m) => (
                    <option value={String(m.id)} selected={v.milestone_id === String(m.id)}>
                      {m.title}
                    </option>
                  ))}
                </select>
              </div>
              <fieldset class="mb-3 issue-choices">
                <legend class="text-bold mb-1">Assignees</legend>
                {ch.users.length ? (
                  ch.users.map((u) => (
                    <div class="form-checkbox my-1">
                      <label for={`issue_assignee_${u.id}`}>
                        <input
                          type="checkbox"
                          id={`issue_assignee_${u.id}`}
                          name="assignee_ids"
                          value={String(u.id)}
                          checked={v.assignee_ids.includes(String(u.id))}
                        />
                        {u.name} <span class="color-fg-muted">@{u.username}</span>
                      </label>
                    </div>
                  ))
                ) : (
                  <p class="note mt-0">No one to assign.</p>
                )}
              </fieldset>
              <div class="FormControl mb-3">
                <label class="FormControl-label" for="issue_due_date">
                  Due date
                </label>
                <input class="form-control FormControl-input" type="date" id="issue_due_date" name="due_date" value={v.due_date} />
              </div>
            </div>
          ) : null}
        </div>
        <div class="d-flex flex-items-center">
          <button type="submit" class="btn btn-primary mr-2">
            {p.editing ? 'Save changes' : 'Create issue'}
          </button>
          <a class="btn" href={back}>
            Cancel
          </a>
        </div>
      </PostForm>
    </Layout>
  );
}
