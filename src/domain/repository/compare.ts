// Comparing two commits (Gitlab::Git::Compare, Gitlab::Git::MergeBase): their merge base and the commits
// of one not reachable from the other. Shared by the compare API and the compare page.
import type { Commit } from '../../git/objects.ts';
import type { Repository } from '../../git/repository.ts';

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
