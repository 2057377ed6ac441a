// A page of a history (`git log --format=%H` with the commits API's filters): when its revisions are commit
// ids (no `--all`, which follows the refs), the page never changes, and it is kept per (repository,
// arguments), so reading the same page again spawns no git.
import type { Repository } from '../../git/repository.ts';
import { LruCache } from '../../lib/lru-cache.ts';

/** pages by repository and `git log` arguments (a few kilobytes each) */
const pages = new LruCache<string[]>(1024);

/**
 * The commit ids `git log <args>` lists (paths literal). `fixed`: every revision in `args` is a commit id,
 * so the answer is kept; otherwise git runs each time. A git failure rejects with its GitError, never kept.
 */
export function historyPage(repo: Repository, args: string[], fixed: boolean): Promise<string[]> {
  const run = async () => {
    const { stdout } = await repo.run(args, { env: { GIT_LITERAL_PATHSPECS: '1' } });
    return stdout.toString('utf8').split('\n').filter(Boolean);
  };
  return fixed ? pages.get(`${repo.gitDir}\0${args.join('\0')}`, run) : run();
}
