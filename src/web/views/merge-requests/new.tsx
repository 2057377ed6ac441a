// The new merge request form: branch pickers, title, description with a preview (htmx; without
// JavaScript the form still submits), errors shown above the form with what the user typed kept.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { FormErrors, PostForm } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { type ProjectRef, projectCrumbs, projectHref } from './common.tsx';

export interface NewMergeRequestValues {
  source_branch: string;
  target_branch: string;
  title: string;
  description: string;
}

function BranchSelect(p: { id: string; name: string; label: string; branches: string[]; value: string }): SafeHtml {
  const options = p.value && !p.branches.includes(p.value) ? [p.value, ...p.branches] : p.branches;
  return (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <select class="form-select FormControl-select" id={p.id} name={p.name} required>
        {options.map((b) => (
          <option value={b} selected={b === p.value}>
            {b}
          </option>
        ))}
      </select>
    </div>
  );
}

export function NewMergeRequestPage(p: {
  ctx: WebCtx;
  project: ProjectRef;
  branches: string[];
  values: NewMergeRequestValues;
  errors?: string[] | null;
}): SafeHtml {
  const v = p.values;
  return (
    <Layout
      ctx={p.ctx}
      title={`New merge request · ${p.project.fullPath}`}
      crumbs={projectCrumbs(p.project, { text: 'Merge requests', href: `${projectHref(p.project)}/-/merge_requests` }, { text: 'New' })}
    >
      <h1 class="h2 mb-3">New merge request</h1>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={`/-/p/${p.project.id}/merge_requests`} id="new_merge_request">
        <div class="d-flex flex-wrap">
          <div class="mr-4">
            <BranchSelect id="merge_request_source_branch" name="source_branch" label="Source branch" branches={p.branches} value={v.source_branch} />
          </div>
          <div>
            <BranchSelect id="merge_request_target_branch" name="target_branch" label="Target branch" branches={p.branches} value={v.target_branch} />
          </div>
        </div>
        <div class="FormControl FormControl--fullWidth mb-3">
          <label class="FormControl-label" for="merge_request_title">
            Title
          </label>
          <input class="form-control FormControl-input width-full" type="text" id="merge_request_title" name="title" value={v.title} required maxlength="255" />
        </div>
        <div class="FormControl FormControl--fullWidth mb-3">
          <label class="FormControl-label" for="merge_request_description">
            Description
          </label>
          <textarea class="form-control FormControl-textarea width-full" id="merge_request_description" name="description" rows="8">
            {`\n${v.description}`}
          </textarea>
          <button
            type="button"
            class="btn btn-sm mt-2 flex-self-start"
            hidden
            data-mr-needs-js
            hx-post="/-/markdown_preview"
            hx-include="#merge_request_description"
            hx-vals={JSON.stringify({ project_id: String(p.project.id) })}
            hx-target="#merge_request_preview"
            hx-swap="innerHTML"
          >
            Preview
          </button>
          <section class="mt-2 mr-preview" id="merge_request_preview" aria-live="polite" aria-label="Preview of the description" />
        </div>
        <button type="submit" class="btn btn-primary">
          Create merge request
        </button>
      </PostForm>
    </Layout>
  );
}
