// Comparing two commits (Gitlab::Git::Compare, Gitlab::Git::MergeBase): their merge base and the commits
// of one not reachable from the other. Shared by the compare API and the compare page.
import { diffBetween, type DiffCollection, type DiffLimits, emptyTree } from '../../git/diff.ts';
import type { Commit } from '../../git/objects.ts';
import type { Repository } from '../../git/repository.ts';
import { LruCache } from '../../lib/lru-cache.ts';

/** `git merge-base` of commits (SHAs checked by the caller); null for unrelated histories. */
export async function mergeBase(repo: Repository, shas: string[]): Promise<string | null> {
  const r = await repo.run(['merge-base', ...shas], { okCodes: [0, 1] });
  const sha = r.stdout.toString('latin1').split('\n', 1)[0].trim();
  return r.code === 0 && /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
}

/** Commits of `to` not reachable from `from`, oldest first (`git log --reverse from..to`). */
export async function commitsBetween(repo: Repository, from: string, to: string): Promise<Commit[]> {
  const r = await repo.run(['rev-list', '--reverse', to, `^${from}`, '--'], { maxBytes: 1 << 30 });
  const shas = r.stdout
    .toString('latin1')
    .split('\n')
    .filter((s) => s.length >= 40);
  const commits = await Promise.all(shas.map((s) => repo.commit(s)));
  return commits.filter((x): x is Commit => x !== null);
}

export interface Comparison {
  /** the merge base (or `from` for a straight compare); null for unrelated histories */
  base: string | null;
  diff: DiffCollection;
  /** oldest first */
  commits: Commit[];
}

/** comparisons by repository, commit ids, kind and diff limits: two commits always compare the same */
const comparisons = new LruCache<Comparison>(16);

/**
 * Compare of two commits (SHAs checked by the caller): the diff from their merge base (`straight`: from
 * `from`; unrelated histories: from the empty tree) and the commits of `to` not in `from`. Kept per
 * (repository, from, to, straight, limits), so the same compare costs git once.
 */
export function compareCommits(repo: Repository, from: string, to: string, straight: boolean, limits: DiffLimits): Promise<Comparison> {
  const key = `${repo.gitDir}\0${from}\0${to}\0${straight}\0${JSON.stringify(limits)}`;
  return comparisons.get(key, async () => {
    const [{ base, diff }, commits] = await Promise.all([
      (async () => {
        const base = straight ? from : await mergeBase(repo, [from, to]);
        return { base, diff: await diffBetween(repo, base ?? emptyTree(to), to, limits) };
      })(),
      commitsBetween(repo, from, to),
    ]);
    return { base, diff, commits };
  });
}

/** diffs by repository, commit ids and diff limits (a merge request's changes, a commit's diff) */
const diffs = new LruCache<DiffCollection>(64);
/**
 * a diff whose patches pass this many characters is not kept (without `enforce` a diff has no size limit): the
 * 64 kept diffs hold at most 32 MB
 */
export const KEPT_DIFF_MAX_CHARS = 256 << 10;

/**
 * The diff of two commits (SHAs) within `limits`, kept per (repository, from, to, limits) unless its patches
 * pass KEPT_DIFF_MAX_CHARS: the changes of a merge request or of a commit cost git once, however often they
 * are read. Callers must not change it.
 */
export function keptDiff(repo: Repository, from: string, to: string, limits: DiffLimits): Promise<DiffCollection> {
  const key = `${repo.gitDir}\0${from}\0${to}\0${JSON.stringify(limits)}`;
  const diff = diffs.get(key, () => diffBetween(repo, from, to, limits));
  return diff.then((d) => {
    let chars = 0;
    for (const f of d.files) chars += f.patch.length;
    if (chars > KEPT_DIFF_MAX_CHARS) diffs.forget(key, diff);
    return d;
  });
}

/** commit ids of `head` not reachable from `base`, newest first, by repository and commit ids */
const revLists = new LruCache<string[] | null>(1024);

/**
 * `git rev-list head ^base` (SHAs; base null: every ancestor of head), kept per (repository, base, head);
 * null when git cannot list them (an object is missing).
 */
export function keptRevList(repo: Repository, base: string | null, head: string): Promise<string[] | null> {
  return revLists.get(`${repo.gitDir}\0${base}\0${head}`, async () => {
    const r = await repo.run(['rev-list', head, ...(base ? [`^${base}`] : []), '--'], { okCodes: [0, 128], maxBytes: 256 << 20 });
    return r.code === 0 ? r.stdout.toString().split('\n').filter(Boolean) : null;
  });
}
