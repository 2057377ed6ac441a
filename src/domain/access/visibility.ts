// The rulebook of visibility and feature access: who sees a level without a membership, which levels the
// administrator restricted, when a project feature is open to a viewer, and the one SQL condition of "the
// projects this actor may see". The policy, the queries and the services ask here rather than restating a
// rule (how open each level is, and that a group bounds what it holds, is core/visibility-levels.ts).
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database, ProjectRow } from '../../db/schema.ts';
import { FEATURES, settingsOf, type Feature, type ProjectSettings } from '../core/project-settings.ts';
import type { Settings, VisibilityName } from '../core/settings-definitions.ts';
import type { Actor } from './actor.ts';

/** The levels the administrator restricted (restricted_visibility_levels), as they bind `actor`: administrators may use them all. */
export function restrictedLevels(settings: Pick<Settings, 'restricted_visibility_levels'>, actor: Pick<Actor, 'isAdmin'>): string[] {
  return actor.isAdmin ? [] : settings.restricted_visibility_levels;
}

/** Gitlab::VisibilityLevel.allowed_for?, negated: `v` is restricted for `actor`. */
export function restrictedFor(settings: Pick<Settings, 'restricted_visibility_levels'>, actor: Pick<Actor, 'isAdmin'>, v: string): boolean {
  return restrictedLevels(settings, actor).includes(v);
}

/**
 * public_visibility_restricted?: when the public level is restricted, anonymous visitors see no user
 * profiles (nor their keys and avatars); signed-in users still do.
 */
export function publicProfiles(settings: Pick<Settings, 'restricted_visibility_levels'>, actor: Pick<Actor, 'user'>): boolean {
  return !!actor.user || !settings.restricted_visibility_levels.includes('public');
}

/**
 * The levels open to `actor` without a membership: public to everyone, internal to signed-in users who
 * are not external. (Administrators see everything; that is the policy's, not a level's.)
 */
export function openLevels(actor: Pick<Actor, 'user'>): VisibilityName[] {
  return actor.user && actor.user.external === 0 ? ['public', 'internal'] : ['public'];
}

/** Whether a project or group of visibility `v` is open to `actor` without a membership. */
export function openTo(actor: Pick<Actor, 'user'>, v: string): boolean {
  return (openLevels(actor) as string[]).includes(v);
}

/** A feature at `private` is for members of at least this level (ProjectFeature::PRIVATE_FEATURES_MIN_ACCESS_LEVEL). */
export function privateFeatureMinLevel(feature: Feature, projectVisibility: string): number {
  if (feature === 'repository') return projectVisibility === 'private' ? 20 : 10;
  return ['merge_requests', 'container_registry', 'package_registry', 'environments'].includes(feature) ? 20 : 10;
}

/**
 * ProjectFeature#feature_available?: a `disabled` feature is open to nobody (administrators included), a
 * `private` one to administrators and members of the feature's minimum level, an `enabled` (or `public`)
 * one to whoever sees the project. Whether the actor sees the project at all is the caller's ability check.
 */
export function featureOpen(actor: Pick<Actor, 'isAdmin'>, project: FeatureProject, access: { level: number }, feature: Feature): boolean {
  return openAt(actor, project, settingsOf(project), access, feature);
}

/** The features of `project` open to the viewer (featureOpen of each), for a view of the project. */
export function openFeatures(actor: Pick<Actor, 'isAdmin'>, project: FeatureProject, access: { level: number }): ReadonlySet<Feature> {
  const settings = settingsOf(project);
  return new Set((Object.keys(FEATURES) as Feature[]).filter((f) => openAt(actor, project, settings, access, f)));
}

type FeatureProject = Pick<ProjectRow, 'settings' | 'visibility'>;

function openAt(actor: Pick<Actor, 'isAdmin'>, project: FeatureProject, settings: ProjectSettings, access: { level: number }, feature: Feature): boolean {
  const level = settings[`${feature}_access_level`];
  if (level === 'disabled') return false;
  if (level === 'private') return actor.isAdmin || access.level >= privateFeatureMinLevel(feature, project.visibility);
  return true;
}

/** A condition on the `projects` table. */
export type ProjectsWhere = (eb: ExpressionBuilder<Database, 'projects'>) => Expression<SqlBool>;

/** SQL: the projects open to a non-administrator by their visibility alone (openLevels). */
export function openProjectsWhere(actor: Pick<Actor, 'user'>): ProjectsWhere {
  if (!actor.user) return (eb) => eb('projects.visibility', '=', 'public');
  const levels = openLevels(actor);
  return (eb) => eb('projects.visibility', 'in', levels);
}

/**
 * THE condition of "the projects `actor` may see" (ProjectsFinder's visibility), for every list:
 * administrators all; anonymous visitors the public ones; users those open to them by visibility and
 * those of `memberSet`, the projects of their memberships (direct, inherited from groups, personal).
 * Each caller builds the membership set its own way; it is used only for a signed-in non-administrator.
 */
export function visibleProjectsWhere(actor: Pick<Actor, 'user' | 'isAdmin'>, memberSet: ProjectsWhere): ProjectsWhere {
  if (actor.isAdmin) return () => sql<SqlBool>`1 = 1`;
  const open = openProjectsWhere(actor);
  if (!actor.user) return open;
  return (eb) => eb.or([open(eb), memberSet(eb)]);
}
