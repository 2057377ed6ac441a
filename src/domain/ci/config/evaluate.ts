// Which jobs a pipeline gets (GitLab's Gitlab::Ci::Build::Rules and Policy::Refs/Variables):
// `workflow:rules`, then each job's `rules` (the first that matches decides; none: the job is left out)
// or `only`/`except`. `changes` compares the files a push changed (a pipeline without a push diff — a
// new branch, the API — counts as changed, as GitLab's); `exists` globs the commit's files.
import { compileExpression } from './expressions.ts';
import { anyMatch } from './glob.ts';
import type { CiJobSpec, CiPolicy, CiRule } from './parse.ts';

export interface EvalContext {
  /** branch or tag name */
  ref: string;
  tag: boolean;
  source: string;
  variables: Record<string, string>;
  /** the commit's files (for exists); absent: exists matches */
  files?(): Promise<string[]>;
  /** the files the push changed; null (or absent): every `changes` matches */
  changed?(): Promise<string[] | null>;
}

function changesPatterns(changes: unknown): string[] | null {
  if (Array.isArray(changes)) return changes.filter((x): x is string => typeof x === 'string');
  if (typeof changes === 'object' && changes !== null) {
    const c = changes as { paths?: unknown; compare_to?: unknown };
    // compare_to needs another ref's diff: not evaluated, counts as changed
    if (c.compare_to !== undefined) return null;
    if (Array.isArray(c.paths)) return c.paths.filter((x): x is string => typeof x === 'string');
  }
  return null;
}

async function changesMatch(changes: unknown, ctx: EvalContext): Promise<boolean> {
  const patterns = changesPatterns(changes);
  if (!patterns) return true;
  const changed = ctx.changed ? await ctx.changed() : null;
  if (changed === null) return true;
  return anyMatch(patterns, changed);
}

export interface RuleOutcome {
  when: string;
  allowFailure?: boolean;
  variables?: Record<string, string>;
  startIn?: string;
}

async function ruleMatches(rule: CiRule, ctx: EvalContext): Promise<boolean> {
  if (rule.if !== undefined && !compileExpression(rule.if)(ctx.variables)) return false;
  if (rule.changes !== undefined && !(await changesMatch(rule.changes, ctx))) return false;
  if (rule.exists && ctx.files && !anyMatch(rule.exists, await ctx.files())) return false;
  return true;
}

/** The first matching rule's outcome, or null when none matches (or it says never). */
export async function evaluateRules(rules: CiRule[], ctx: EvalContext, defaultWhen: string): Promise<RuleOutcome | null> {
  for (const rule of rules) {
    if (!(await ruleMatches(rule, ctx))) continue;
    const when = rule.when ?? defaultWhen;
    if (when === 'never') return null;
    return { when, allowFailure: rule.allow_failure, variables: rule.variables, startIn: rule.start_in };
  }
  return null;
}

/** Workflow rules: whether the pipeline runs, with the matching rule's variables. */
export async function evaluateWorkflow(rules: CiRule[] | null, ctx: EvalContext): Promise<{ run: boolean; variables: Record<string, string> }> {
  if (!rules) return { run: true, variables: {} };
  const outcome = await evaluateRules(rules, ctx, 'always');
  return outcome ? { run: true, variables: outcome.variables ?? {} } : { run: false, variables: {} };
}

/** Policy::Refs: keywords (branches, tags, api, web, pushes, triggers, …), /regex/ or a ref name. */
function refMatches(pattern: string, ctx: EvalContext): boolean {
  const name = pattern.replace(/@.*$/, '');
  switch (name) {
    case 'branches':
      return !ctx.tag && ctx.source !== 'merge_request_event';
    case 'tags':
      return ctx.tag;
    case 'api':
      return ctx.source === 'api';
    case 'web':
      return ctx.source === 'web';
    case 'pushes':
      return ctx.source === 'push';
    case 'triggers':
      return ctx.source === 'trigger';
    case 'pipelines':
      return ctx.source === 'pipeline' || ctx.source === 'parent_pipeline';
    case 'schedules':
      return ctx.source === 'schedule';
    case 'merge_requests':
      return ctx.source === 'merge_request_event';
    case 'external':
      return ctx.source === 'external';
    case 'chat':
      return ctx.source === 'chat';
    case 'external_pull_requests':
      return ctx.source === 'external_pull_request_event';
  }
  const re = /^\/(.*)\/([a-z]*)$/s.exec(name);
  if (re) {
    try {
      return new RegExp(re[1], re[2].replace(/[^ims]/g, '')).test(ctx.ref);
    } catch {
      return false;
    }
  }
  return name === ctx.ref;
}

function policyMatches(p: CiPolicy, ctx: EvalContext): boolean {
  if (p.refs && !p.refs.some((r) => refMatches(r, ctx))) return false;
  if (p.variables && !p.variables.some((v) => compileExpression(v)(ctx.variables))) return false;
  return true;
}

async function exceptMatches(p: CiPolicy, ctx: EvalContext): Promise<boolean> {
  if (p.refs?.some((r) => refMatches(r, ctx))) return true;
  if (p.variables?.some((v) => compileExpression(v)(ctx.variables))) return true;
  return p.changes !== undefined && (await changesMatch(p.changes, ctx));
}

async function policyChanges(p: CiPolicy, ctx: EvalContext): Promise<boolean> {
  return p.changes === undefined || changesMatch(p.changes, ctx);
}

/** The job as this pipeline has it, or null when its rules or only/except leave it out. */
export async function evaluateJob(job: CiJobSpec, ctx: EvalContext): Promise<RuleOutcome | null> {
  if (job.rules) return evaluateRules(job.rules, ctx, job.when);
  // only: every key has a matching condition; except: any key has one
  if (job.only && !(policyMatches(job.only, ctx) && (await policyChanges(job.only, ctx)))) return null;
  if (job.except && (await exceptMatches(job.except, ctx))) return null;
  return { when: job.when };
}
