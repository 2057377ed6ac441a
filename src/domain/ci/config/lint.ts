// The CI lint (Gitlab::Ci::Lint, lib/api/lint.rb): a file checked as a pipeline would read it, its merged
// YAML and includes, and with dry_run the jobs a pipeline of a ref would get.
import type { NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import type { CiDeps } from '../deps.ts';
import { evaluateJob } from './evaluate.ts';
import { parseCiLimited } from './parse-pool.ts';
import { ciConfigPathVariable, includeReader } from './source.ts';

export interface LintOptions {
  includeJobs: boolean;
  dryRun: boolean;
  ref: string;
}

/** Gitlab::Ci::Lint#legacy_validate: a static check, or with dry_run the jobs a pipeline of `ref` would get. */
export async function ciLint(
  deps: CiDeps,
  ctx: { project: ProjectRow; namespace: NamespaceRow },
  actor: Actor,
  content: string,
  sha: string | null,
  opts: LintOptions,
) {
  if (!content.trim())
    return {
      valid: false,
      errors: ['Please provide content of .gitlab-ci.yml'],
      warnings: [],
      merged_yaml: null,
      includes: [],
      ...(opts.includeJobs ? { jobs: [] } : {}),
    };
  const repo = deps.repos.repository(ctx.project);
  const read = sha ? includeReader(deps, actor, ctx.project, repo, sha) : null;
  const r = await parseCiLimited(content, read, { timeoutMs: deps.config.ciConfigTimeoutMs, mergedYaml: true });
  const fullPath = `${ctx.namespace.full_path}/${ctx.project.path}`;
  const web = `${deps.config.externalUrl}/${fullPath}`;
  const out: Record<string, unknown> = {
    valid: r.errors.length === 0,
    errors: r.errors,
    warnings: r.warnings,
    merged_yaml: r.mergedYaml,
    includes: r.includes.map((i) => {
      const path = i.location.replace(/^\/+/, '');
      // another project's file: at the ref it was read from
      const [base, at] = i.type === 'file' ? [`${deps.config.externalUrl}/${String(i.extra.project)}`, String(i.extra.ref)] : [web, sha];
      return {
        ...i,
        blob: at ? `${base}/-/blob/${at}/${path}` : null,
        raw: at ? `${base}/-/raw/${at}/${path}` : null,
        context_project: i.context_project ?? fullPath,
        context_sha: sha,
      };
    }),
  };
  if (opts.includeJobs) {
    const jobs = [];
    const ns = ctx.namespace;
    const tag = !!sha && !(await repo.branch(opts.ref)) && !!(await repo.tag(opts.ref));
    const variables = r.config
      ? {
          ...deps.ci.pipelines.predefined(ctx.project, ns, {
            ref: opts.ref,
            tag,
            sha: sha ?? '',
            beforeSha: '0'.repeat(40),
            source: 'push',
            message: '',
            actor,
            configPath: await ciConfigPathVariable(deps, ctx.project),
          }),
          ...r.config.variables,
        }
      : {};
    for (const j of r.config?.jobs ?? []) {
      const outcome = opts.dryRun ? await evaluateJob(j, { ref: opts.ref, tag, source: 'push', variables }) : { when: j.when };
      if (!outcome) continue;
      jobs.push({
        name: j.name,
        stage: j.stage,
        before_script: j.options.before_script ?? [],
        script: j.options.script ?? [],
        after_script: j.options.after_script ?? [],
        tag_list: j.tags,
        environment: j.environment,
        when: outcome.when,
        allow_failure: outcome.allowFailure ?? j.allowFailure ?? (outcome.when === 'manual' && !j.rules),
        only: j.only,
        except: j.except,
        needs: j.options.needs?.map((n) => ({ name: n.job })) ?? null,
      });
    }
    out.jobs = jobs;
  }
  return out;
}
