// Settings → CI/CD of a project (Maintainers and up) or a group (Maintainers and up), as GitLab's pages: the CI/CD
// variables (the shared variables section), the runners the place's jobs may use with Edit, Pause/Resume and Delete
// where the viewer may, and "New project runner" / "New group runner" (its glrt- token shown once with the command
// that starts a runner with it); a project's page links to its pipeline schedules and trigger tokens.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { type VariableFormValues, type VariableItem, type VariableUrls, VariableEditForm, VariablesSection } from './ci-variables.tsx';
import type { FieldErrors } from './fields.tsx';
import { PlaceFrame, placeAction, placeKey, placeNoun, placeUrl, type SettingsPlace } from './place.tsx';
import { NewRunnerForm, type RunnerFormValues, type RunnerItem, RunnerTable } from './runners.tsx';

/** Where a place's variable forms go. */
export function placeVariableUrls(place: SettingsPlace): VariableUrls {
  const base = `${placeUrl(place)}/-/settings/ci_cd`;
  return {
    add: placeAction(place, 'variables'),
    update: placeAction(place, 'variables/update'),
    remove: placeAction(place, 'variables/delete'),
    edit: `${base}/variables/edit`,
    back: base,
  };
}

export interface CiCdPageProps {
  ctx: WebCtx;
  place: SettingsPlace;
  variables: VariableItem[];
  variableValues: VariableFormValues;
  variableErrors: FieldErrors;
  runners: RunnerItem[];
  /** may the viewer create a runner here (the form shows) */
  mayCreateRunner: boolean;
  runnerValues: RunnerFormValues;
  runnerErrors: string[] | null;
  /** the runner just created: its token, shown on this answer only, and the command to run */
  created: { id: number; token: string; command: string } | null;
}

export function CiCdPage(p: CiCdPageProps): SafeHtml {
  const noun = placeNoun(p.place);
  const base = placeUrl(p.place);
  return (
    <PlaceFrame ctx={p.ctx} place={p.place} title="CI/CD settings" tab="ci_cd">
      <h1 class="h2 mb-3">CI/CD settings</h1>
      {p.place.kind === 'project' ? (
        <nav aria-label="Pipelines settings" class="mb-4 mr-inline-links">
          <a href={`${base}/-/pipeline_schedules`}>Pipeline schedules</a> · <a href={`${base}/-/triggers`}>Pipeline trigger tokens</a> ·{' '}
          <a href={`${base}/-/pipelines`}>Pipelines</a>
        </nav>
      ) : null}

      <VariablesSection
        ctx={p.ctx}
        variables={p.variables}
        values={p.variableValues}
        errors={p.variableErrors}
        urls={placeVariableUrls(p.place)}
        scoped
        intro={
          noun === 'project'
            ? 'Variables store information, like passwords and secret keys, that you can use in job scripts.'
            : "Variables store information, like passwords and secret keys, that you can use in job scripts. Every project of the group and its subgroups gets them; a project's own variable of the same key wins."
        }
      />

      <section class="mb-5" aria-labelledby="ci-runners">
        <h2 class="h3 mb-2" id="ci-runners">
          Runners
        </h2>
        <p class="color-fg-muted mb-2">
          {noun === 'project'
            ? 'Runners are processes that pick up and execute CI/CD jobs for this project.'
            : "Runners are processes that pick up and execute CI/CD jobs. A group runner takes the jobs of every project of the group and its subgroups; this list also shows the runners of the group's parents and the instance."}
        </p>
        {p.runners.length ? (
          <RunnerTable ctx={p.ctx} runners={p.runners} caption={`Runners available to this ${noun}`} place={placeKey(p.place)} editBase={`${base}/-/runners`} />
        ) : (
          <p class="color-fg-muted mb-3">{`No runners are available to this ${noun} yet.`}</p>
        )}
        {p.mayCreateRunner ? (
          <NewRunnerForm
            ctx={p.ctx}
            title={`New ${noun} runner`}
            action={placeAction(p.place, 'runners')}
            values={p.runnerValues}
            errors={p.runnerErrors}
            created={p.created}
          />
        ) : null}
      </section>
    </PlaceFrame>
  );
}

export function VariableEditPage(p: {
  ctx: WebCtx;
  place: SettingsPlace;
  original: { key: string; environment_scope: string; hidden: boolean };
  values: VariableFormValues;
  errors: FieldErrors;
}): SafeHtml {
  return (
    <PlaceFrame ctx={p.ctx} place={p.place} title="Edit variable" tab="ci_cd">
      <VariableEditForm ctx={p.ctx} original={p.original} values={p.values} errors={p.errors} urls={placeVariableUrls(p.place)} scoped />
    </PlaceFrame>
  );
}
