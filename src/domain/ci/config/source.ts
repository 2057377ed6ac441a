// Which CI file a pipeline reads (Gitlab::Ci::ProjectConfig) and where its includes come from.
//
// The project's `ci_config_path` wins, then the instance's `default_ci_config_path`; a configured path is
// read and nothing else (a missing file: no pipeline). Without either, `.gitlab-ci.yml`, then
// `.service-ci.yml`. A configured `path@group/project[:ref]` is another project's file (GitLab's external
// project source), read as an `include: project` would be.
import type { ProjectRow } from '../../../db/schema.ts';
import type { Repository } from '../../../git/repository.ts';
import type { Actor } from '../../access/actor.ts';
import { settingsOf } from '../../core/project-settings.ts';
import { canReadCode } from '../../repository/read-access.ts';
import type { CiDeps } from '../deps.ts';
import { commitReader, ConfigError, type ReadFile } from './parse.ts';
import { type ParsedCi, parseCiFileLimited, parseCiLimited } from './parse-pool.ts';

/** the files read when no path is configured, in order */
export const CI_CONFIG_FALLBACKS = ['.gitlab-ci.yml', '.service-ci.yml'] as const;

/** The configured path: the project's, else the instance's default (null: neither is set). */
export async function configuredCiPath(deps: Pick<CiDeps, 'settings'>, project: ProjectRow): Promise<string | null> {
  const own = settingsOf(project).ci_config_path as string | null;
  if (own) return own;
  const instance = (await deps.settings.get()).default_ci_config_path as string | null | undefined;
  return instance || null;
}

/** GitLab's CI_CONFIG_PATH: the configured path, else `.gitlab-ci.yml` (also when `.service-ci.yml` was read). */
export async function ciConfigPathVariable(deps: Pick<CiDeps, 'settings'>, project: ProjectRow): Promise<string> {
  return (await configuredCiPath(deps, project)) ?? CI_CONFIG_FALLBACKS[0];
}

/** `file.yml@group/project:ref` → its parts (null: a path of the project's own repository). */
function externalPath(path: string): { file: string; project: string; ref?: string } | null {
  const at = path.lastIndexOf('@');
  if (at <= 0) return null;
  const [project, ref] = path.slice(at + 1).split(':', 2);
  if (!project) return null;
  return { file: path.slice(0, at), project, ...(ref ? { ref } : {}) };
}

/** a path git would misread is no file here (the settings check it when saved) */
function safePath(path: string): string | null {
  const clean = path.replace(/^\/+/, '');
  const ok = clean && !clean.startsWith('-') && !clean.includes('\0') && !clean.split('/').some((s) => s === '..' || s === '.' || s === '');
  return ok ? clean : null;
}

/**
 * The files a pipeline of `project` at `sha` may include: its own commit's, and (`include: project`) the
 * files of projects whose code `actor` may read (GitLab's download_code), at a ref of theirs.
 */
export function includeReader(deps: CiDeps, actor: Actor, project: ProjectRow, repo: Repository, sha: string): ReadFile {
  const local = commitReader(repo, sha);
  const commits = new Map<string, Promise<{ read: (path: string) => Promise<string | null> }>>();
  const other = async (name: string, ref: string) => {
    const found = await deps.resolve.findProjectRow(name);
    const denied = new ConfigError(
      `Project \`${name}\` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.`,
    );
    if (!found || !('project' in found) || !actor.user) throw denied;
    const access = await deps.policy.project(actor, found.project, found.namespace);
    if (!canReadCode(actor, found.project, access)) throw denied;
    const theirs = found.project.id === project.id ? repo : deps.repos.repository(found.project);
    const at = await theirs.resolveCommit(ref);
    if (!at) throw new ConfigError(`Project \`${name}\` reference \`${ref}\` does not exist!`);
    return { read: commitReader(theirs, at) };
  };
  return async (loc) => {
    if (!loc.project) return local(loc.path);
    const key = `${loc.project}\0${loc.ref ?? 'HEAD'}`;
    let entry = commits.get(key);
    if (!entry) commits.set(key, (entry = other(loc.project, loc.ref ?? 'HEAD')));
    return (await entry).read(loc.path);
  };
}

/**
 * The project's CI configuration at `sha`, parsed (null when there is no CI file): the path it was read
 * from and the parse, as the pipeline, the lint and the config API see it.
 */
export async function readPipelineConfig(
  deps: CiDeps,
  actor: Actor,
  project: ProjectRow,
  repo: Repository,
  sha: string,
  opts: { timeoutMs: number; mergedYaml?: boolean },
): Promise<{ path: string; parsed: ParsedCi } | null> {
  const read = includeReader(deps, actor, project, repo, sha);
  const configured = await configuredCiPath(deps, project);
  if (configured) {
    const ext = externalPath(configured);
    if (ext) {
      const entry = { project: ext.project, file: ext.file, ...(ext.ref ? { ref: ext.ref } : {}) };
      return { path: configured, parsed: await parseCiLimited(`include:\n  - ${JSON.stringify(entry)}\n`, read, opts) };
    }
    const path = safePath(configured);
    const parsed = path ? await parseCiFileLimited(path, read, opts) : null;
    return parsed ? { path: configured, parsed } : null;
  }
  for (const path of CI_CONFIG_FALLBACKS) {
    const parsed = await parseCiFileLimited(path, read, opts);
    if (parsed) return { path, parsed };
  }
  return null;
}

/** The CI file's own text at `sha` (lint's GET): the configured path or the first fallback that exists. */
export async function readCiFileContent(deps: Pick<CiDeps, 'settings'>, project: ProjectRow, repo: Repository, sha: string): Promise<string> {
  const configured = await configuredCiPath(deps, project);
  const candidates = configured ? [configured] : [...CI_CONFIG_FALLBACKS];
  for (const p of candidates) {
    const path = safePath(p);
    if (!path) continue;
    const o = await repo.read(`${sha}:${path}`);
    if (o && o.type === 'blob') return o.content?.toString('utf8') ?? '';
  }
  return '';
}
