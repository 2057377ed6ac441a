// The "New project" and "New group" forms (GitLab's /projects/new and /groups/new, blank project).
// A refused form comes back with its errors above it and what the user typed kept.
import type { NamespaceRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { FormErrors, PostForm } from '../components.tsx';
import { Layout } from '../layout.tsx';

export interface NewProjectValues {
  name: string;
  path: string;
  namespace_id: string;
  visibility: string;
  initialize_with_readme: boolean;
}

export interface NewGroupValues {
  name: string;
  path: string;
  visibility: string;
}

const VISIBILITIES: { value: string; text: string; hint: string; group: string }[] = [
  {
    value: 'private',
    text: 'Private',
    hint: 'Project access must be granted explicitly to each user.',
    group: 'The group and its projects can only be viewed by members.',
  },
  {
    value: 'internal',
    text: 'Internal',
    hint: 'The project can be accessed by any signed-in user.',
    group: 'The group and any internal projects can be viewed by any signed-in user.',
  },
  {
    value: 'public',
    text: 'Public',
    hint: 'The project can be accessed without any authentication.',
    group: 'The group and any public projects can be viewed without any authentication.',
  },
];

const LEVEL: Record<string, number> = { private: 0, internal: 10, public: 20 };

/**
 * Why each level cannot be chosen (GitLab greys these out): above the containing group's visibility,
 * or restricted by the administrator (restricted_visibility_levels; administrators may use them all).
 */
export function visibilityLimits(limit: { group?: { visibility: string; kind: 'project' | 'group' }; restricted: string[] }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of VISIBILITIES) {
    if (limit.group && LEVEL[v.value] > LEVEL[limit.group.visibility]) {
      out[v.value] =
        limit.group.kind === 'project'
          ? `${v.value} is not allowed in a ${limit.group.visibility} group.`
          : `${v.value} is not allowed since the parent group has a ${limit.group.visibility} visibility.`;
    } else if (limit.restricted.includes(v.value)) out[v.value] = `${v.value} has been restricted by your GitLab administrator`;
  }
  return out;
}

/** The most open level the limits leave, for a value that is not allowed (private when none is). */
export function allowedValue(value: string, disabled: Record<string, string>): string {
  if (!disabled[value]) return value;
  const open = VISIBILITIES.filter((v) => !disabled[v.value] && LEVEL[v.value] <= LEVEL[value]).pop();
  return open?.value ?? VISIBILITIES.find((v) => !disabled[v.value])?.value ?? value;
}

export function VisibilityRadios(p: {
  name: string;
  value: string;
  kind: 'project' | 'group';
  disabled?: Record<string, string>;
  restricted?: string[];
}): SafeHtml {
  const disabled = p.disabled ?? {};
  return (
    <fieldset class="FormControl mb-3" data-visibility-levels={p.kind} data-restricted={(p.restricted ?? []).join(' ')}>
      <legend class="FormControl-label mb-2">Visibility level</legend>
      {VISIBILITIES.map((v) => (
        <div class="form-checkbox my-1">
          <label for={`${p.kind}_visibility_${v.value}`}>
            <input
              type="radio"
              id={`${p.kind}_visibility_${v.value}`}
              name={p.name}
              value={v.value}
              checked={p.value === v.value}
              disabled={Boolean(disabled[v.value])}
              aria-describedby={`${p.kind}_visibility_${v.value}_note`}
            />
            {v.text}
          </label>
          <p class="note" id={`${p.kind}_visibility_${v.value}_note`} data-hint={p.kind === 'group' ? v.group : v.hint}>
            {disabled[v.value] ? `${p.kind === 'group' ? v.group : v.hint} Not available: ${disabled[v.value]}` : p.kind === 'group' ? v.group : v.hint}
          </p>
        </div>
      ))}
    </fieldset>
  );
}

export function NewProjectPage(p: {
  ctx: WebCtx;
  namespaces: NamespaceRow[];
  values: NewProjectValues;
  errors?: string[] | null;
  /** restricted_visibility_levels, for a user who is not an administrator */
  restricted: string[];
}): SafeHtml {
  const v = p.values;
  const selected = p.namespaces.find((ns) => String(ns.id) === v.namespace_id) ?? p.namespaces[0];
  const disabled = visibilityLimits({
    group: selected?.type === 'Group' ? { visibility: selected.visibility, kind: 'project' } : undefined,
    restricted: p.restricted,
  });
  return (
    <Layout ctx={p.ctx} title="New project" crumbs={[{ text: 'Your work', href: '/dashboard/projects' }, { text: 'New project' }]}>
      <div class="Subhead">
        <h1 class="Subhead-heading">Create blank project</h1>
      </div>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action="/projects" id="new_project" class="new-form">
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="project_name">
            Project name
          </label>
          <input class="form-control input-block" id="project_name" name="name" value={v.name} required maxlength="255" autocomplete="off" />
        </div>
        <div class="d-flex flex-wrap">
          <div class="FormControl mb-3 mr-2">
            <label class="FormControl-label" for="project_namespace_id">
              Project namespace
            </label>
            <select class="form-select" id="project_namespace_id" name="namespace_id">
              {p.namespaces.map((ns) => (
                <option value={String(ns.id)} selected={String(ns.id) === v.namespace_id} data-max-visibility={ns.type === 'Group' ? ns.visibility : 'public'}>
                  {ns.full_path}
                </option>
              ))}
            </select>
          </div>
          <div class="FormControl mb-3">
            <label class="FormControl-label" for="project_path">
              Project slug
            </label>
            <input
              class="form-control"
              id="project_path"
              name="path"
              value={v.path}
              maxlength="255"
              autocomplete="off"
              aria-describedby="project_path_hint"
              data-slug-from="project_name"
            />
            <p class="note" id="project_path_hint">
              Part of the project’s URL; made from the name when left empty.
            </p>
          </div>
        </div>
        <VisibilityRadios name="visibility" value={v.visibility} kind="project" disabled={disabled} restricted={p.restricted} />
        <div class="form-checkbox mb-3">
          <label for="project_initialize_with_readme">
            <input type="checkbox" id="project_initialize_with_readme" name="initialize_with_readme" value="1" checked={v.initialize_with_readme} />
            Initialize repository with a README
          </label>
          <p class="note">Allows you to clone the repository immediately.</p>
        </div>
        <button type="submit" class="btn btn-primary">
          Create project
        </button>{' '}
        <a class="btn" href="/dashboard/projects">
          Cancel
        </a>
      </PostForm>
    </Layout>
  );
}

export function NewGroupPage(p: {
  ctx: WebCtx;
  values: NewGroupValues;
  errors?: string[] | null;
  parentId?: string;
  parentPath?: string;
  /** the parent group's visibility (a subgroup is never more open) */
  parentVisibility?: string;
  /** restricted_visibility_levels, for a user who is not an administrator */
  restricted: string[];
}): SafeHtml {
  const v = p.values;
  const disabled = visibilityLimits({ group: p.parentVisibility ? { visibility: p.parentVisibility, kind: 'group' } : undefined, restricted: p.restricted });
  return (
    <Layout ctx={p.ctx} title="New group" crumbs={[{ text: 'Groups', href: '/dashboard/groups' }, { text: 'New group' }]}>
      <div class="Subhead">
        <h1 class="Subhead-heading">{p.parentId ? 'Create subgroup' : 'Create group'}</h1>
      </div>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action="/groups" id="new_group" class="new-form">
        {p.parentId ? <input type="hidden" name="parent_id" value={p.parentId} /> : null}
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="group_name">
            Group name
          </label>
          <input class="form-control input-block" id="group_name" name="name" value={v.name} required maxlength="255" autocomplete="off" />
        </div>
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="group_path">
            Group URL
          </label>
          <div class="d-flex flex-items-center">
            <span class="color-fg-muted mr-1" aria-hidden="true">
              {`${p.ctx.externalUrl}/${p.parentPath ? `${p.parentPath}/` : ''}`}
            </span>
            <input
              class="form-control"
              id="group_path"
              name="path"
              value={v.path}
              maxlength="255"
              autocomplete="off"
              aria-describedby="group_path_hint"
              data-slug-from="group_name"
            />
          </div>
          <p class="note" id="group_path_hint">
            Made from the name when left empty.
          </p>
        </div>
        <VisibilityRadios name="visibility" value={v.visibility} kind="group" disabled={disabled} restricted={p.restricted} />
        <button type="submit" class="btn btn-primary">
          Create group
        </button>{' '}
        <a class="btn" href="/dashboard/groups">
          Cancel
        </a>
      </PostForm>
    </Layout>
  );
}
