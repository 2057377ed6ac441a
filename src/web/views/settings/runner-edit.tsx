// A runner's edit page in the place it was opened from: a project's or group's CI/CD settings, or the admin area's
// runners.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { AdminFrame } from '../admin/admin.tsx';
import type { FieldErrors } from './fields.tsx';
import { PlaceFrame, placeKey, placeUrl, type SettingsPlace } from './place.tsx';
import { RunnerEditForm, type RunnerEditValues } from './runners.tsx';

/** Where runners are listed: a project's or group's CI/CD settings, or the admin area. */
export type RunnerPlace = SettingsPlace | { kind: 'admin' };

/** The list a runner page goes back to. */
export const runnerPlaceBack = (p: RunnerPlace): string => (p.kind === 'admin' ? '/admin/runners' : `${placeUrl(p)}/-/settings/ci_cd`);
export const runnerPlaceKey = (p: RunnerPlace): string => (p.kind === 'admin' ? 'admin' : placeKey(p));

export function RunnerEditPage(p: {
  ctx: WebCtx;
  place: RunnerPlace;
  runner: { id: number; runner_type: string };
  values: RunnerEditValues;
  errors: FieldErrors;
}): SafeHtml {
  const title = `Edit runner #${p.runner.id}`;
  const form = (
    <RunnerEditForm ctx={p.ctx} runner={p.runner} values={p.values} errors={p.errors} place={runnerPlaceKey(p.place)} back={runnerPlaceBack(p.place)} />
  );
  if (p.place.kind === 'admin') {
    return (
      <AdminFrame ctx={p.ctx} title={title} tab="runners" crumbs={[{ text: 'Runners', href: '/admin/runners' }, { text: `#${p.runner.id}` }]}>
        {form}
      </AdminFrame>
    );
  }
  return (
    <PlaceFrame ctx={p.ctx} place={p.place} title={title} tab="ci_cd">
      {form}
    </PlaceFrame>
  );
}
