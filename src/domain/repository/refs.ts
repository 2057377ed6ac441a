// Branches and tags as the API lists and checks them: ref name rules, GitLab's search and regex
// filters, merged branches, and Gitaly's orders.
import { BRANCH_PREFIX, isValidRefName, TAG_PREFIX } from '../../git/refs.ts';
import type { Ref } from '../../git/repository.ts';
import { Errors } from '../../lib/errors.ts';
import { matchAll, PatternTimeout, untrustedRegexp } from '../../lib/untrusted-regexp.ts';
import type { RepoContext } from './context.ts';

/**
 * Gitlab::GitRefValidator.validate: a name `git check-ref-format` accepts under refs/heads/, not
 * HEAD, not starting with `-` or with an expanded prefix.
 */
export function isValidNewRefName(name: string): boolean {
  return isValidRefName(name) && !name.startsWith('refs/heads/') && !name.startsWith('refs/remotes/');
}

/** The project's default branch name (GitLab's default_branch_or_main). */
export function defaultBranchName(ctx: RepoContext): string {
  return ctx.project.default_branch ?? 'main';
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * GitRefsFinder#by_search: case-insensitive substring match; `^` anchors the start, `$` the end and
 * `*` is a wildcard (then the order is kept), otherwise an exact match (any case) comes first.
 */
export function searchRefs(refs: Ref[], search: string | undefined): Ref[] {
  if (!search) return refs;
  const regexSearch = /[\^$*]/.test(search);
  let pattern = escapeRegex(search.toLowerCase());
  if (regexSearch) pattern = pattern.replace('\\^', '^').replace(/\\\*/g, '.*?').replace('\\$', '$');
  let hits: boolean[];
  try {
    hits = matchAll(
      new RegExp(pattern),
      refs.map((r) => r.short.toLowerCase()),
    );
  } catch (e) {
    if (e instanceof PatternTimeout) throw Errors.refused('Search is too complex');
    throw e;
  }
  const matches = refs.filter((_, i) => hits[i]);
  if (regexSearch) return matches;
  const exact = matches.findIndex((r) => r.short.toLowerCase() === search.toLowerCase());
  if (exact > 0) matches.unshift(...matches.splice(exact, 1));
  return matches;
}

/**
 * BranchesFinder#by_regex: Gitlab::UntrustedRegexp (RE2), unanchored, case-sensitive. RE2 has no
 * look-around and no back-references; a leading `(?i)` is its case-insensitive flag.
 */
export function regexRefs(refs: Ref[], regex: string | undefined): Ref[] {
  if (!regex) return refs;
  const re = untrustedRegexp(regex);
  if (!re) throw Errors.refused('Regex is invalid');
  try {
    const hits = matchAll(
      re,
      refs.map((r) => r.short),
    );
    return refs.filter((_, i) => hits[i]);
  } catch (e) {
    if (e instanceof PatternTimeout) throw Errors.refused('Regex is invalid');
    throw e;
  }
}

/**
 * Repository#merged_branch_names: branches whose tip the default branch contains, except those at
 * the very same commit (the default branch itself included).
 */
export async function mergedBranchNames(ctx: RepoContext): Promise<Set<string>> {
  const head = await ctx.repo.branch(defaultBranchName(ctx));
  if (!head) return new Set();
  return ctx.repo.whileRefs(`merged:${head.commit}`, () => branchesMergedInto(ctx, head.commit));
}

async function branchesMergedInto(ctx: RepoContext, commit: string): Promise<Set<string>> {
  const { stdout } = await ctx.repo.run(['for-each-ref', `--merged=${commit}`, '--format=%(objectname) %(refname)', BRANCH_PREFIX]);
  const out = new Set<string>();
  for (const line of stdout.toString('utf8').split('\n')) {
    if (!line) continue;
    const sp = line.indexOf(' ');
    if (line.slice(0, sp) === commit) continue;
    out.add(line.slice(sp + 1 + BRANCH_PREFIX.length));
  }
  return out;
}

/** Repository#merged_to_root_ref? for one branch (null when the default branch has no commit). */
export async function mergedToDefault(ctx: RepoContext, ref: Ref): Promise<boolean | null> {
  const head = await ctx.repo.branch(defaultBranchName(ctx));
  if (!head) return null;
  if (ref.commit === head.commit) return false;
  return ctx.repo.isAncestor(ref.commit, head.commit);
}

/** Gitaly's FindLocalBranches order: refname, or the tip's committer date with refname breaking ties. */
export async function sortBranches(ctx: RepoContext, refs: Ref[], sort: string | undefined): Promise<Ref[]> {
  if (sort !== 'updated_asc' && sort !== 'updated_desc') return refs;
  const times = new Map<string, number>();
  for (const r of refs) times.set(r.name, (await ctx.repo.commit(r.commit))?.committer.time ?? 0);
  const dir = sort === 'updated_asc' ? 1 : -1;
  // refs come sorted by name and the sort is stable: equal dates stay in name order
  return [...refs].sort((a, b) => dir * (times.get(a.name)! - times.get(b.name)!));
}

/** A branch that is a directory of another or the other way round ("a" and "a/b"). */
export function conflictsWithHierarchy(existing: Ref[], name: string): boolean {
  return existing.some((r) => r.short.startsWith(name + '/') || name.startsWith(r.short + '/'));
}

/**
 * Gitaly's FindAllTags order: `git for-each-ref --sort=[-](refname|creatordate|version:refname)`
 * (refname breaks ties, ascending either way).
 */
export async function sortTags(ctx: RepoContext, tags: Ref[], orderBy: string, sort: string): Promise<Ref[]> {
  const key = orderBy === 'name' ? 'refname' : orderBy === 'version' ? 'version:refname' : 'creatordate';
  const { stdout } = await ctx.repo.run(['for-each-ref', `--sort=${sort === 'asc' ? '' : '-'}${key}`, '--format=%(refname)', TAG_PREFIX]);
  const byName = new Map(tags.map((t) => [t.name, t]));
  const out: Ref[] = [];
  for (const name of stdout.toString('utf8').split('\n')) {
    const t = byName.get(name);
    if (t) out.push(t);
  }
  return out;
}
