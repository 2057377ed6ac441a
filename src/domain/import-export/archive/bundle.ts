// The repository part of an archive: `project.bundle`, a git bundle of every ref (GitLab's
// RepositoryBundleSaver / RepositoryRestorer). Bundles from archives are untrusted: verified first,
// fetched with fsck, only into refs/heads, refs/tags, refs/merge-requests, refs/pipelines and
// refs/keep-around (nothing else of a bundle's refs is taken).
import fs from 'node:fs';
import { git } from '../../../git/command.ts';
import type { Repository } from '../../../git/repository.ts';

/** Refs a bundle may restore. */
const RESTORED = ['refs/heads/', 'refs/tags/', 'refs/merge-requests/', 'refs/pipelines/', 'refs/keep-around/'];

/** Writes a bundle of every ref of `repo` to `file`; false (and no file) when the repository has no refs. */
export async function createBundle(repo: Repository, file: string): Promise<boolean> {
  const refs = await repo.run(['for-each-ref', '--count=1', '--format=%(refname)']);
  if (!refs.stdout.toString().trim()) return false;
  await repo.run(['bundle', 'create', '--quiet', file, '--all'], { timeoutMs: 30 * 60_000 });
  return true;
}

export class BundleError extends Error {}

/**
 * Fetches the bundle's refs into `repo` (which should be empty) and points HEAD at `defaultBranch` when
 * that branch came with it (else at the bundle's HEAD branch, else the first branch). Answers the
 * default branch the repository ends with (null: the bundle had no branch).
 */
export async function restoreBundle(repo: Repository, file: string, defaultBranch: string | null): Promise<string | null> {
  if (!fs.existsSync(file)) throw new BundleError('project.bundle is missing');
  const verify = await git(['bundle', 'verify', '--quiet', file], { gitDir: repo.gitDir, okCodes: [0, 1, 128] });
  if (verify.code !== 0) throw new BundleError(`project.bundle is not a valid git bundle: ${verify.stderr.trim().split('\n').pop() ?? ''}`);
  const listed = await git(['bundle', 'list-heads', file], { gitDir: repo.gitDir });
  const heads = listed.stdout
    .toString()
    .split('\n')
    .map((l) => l.split(' ')[1])
    .filter((r): r is string => Boolean(r));
  const refspecs = RESTORED.map((p) => `+${p}*:${p}*`);
  const fetched = await git(
    ['-c', 'fetch.fsckObjects=true', '-c', 'transfer.fsckObjects=true', 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', file, ...refspecs],
    {
      gitDir: repo.gitDir,
      timeoutMs: 30 * 60_000,
      okCodes: [0, 1, 128],
    },
  );
  if (fetched.code !== 0) throw new BundleError(`project.bundle could not be restored: ${fetched.stderr.trim().split('\n').pop() ?? ''}`);
  repo.touchRefs();
  const branches = heads.filter((h) => h.startsWith('refs/heads/')).map((h) => h.slice('refs/heads/'.length));
  let head: string | null = null;
  if (defaultBranch && branches.includes(defaultBranch)) head = defaultBranch;
  else if (branches.includes('main')) head = 'main';
  else if (branches.includes('master')) head = 'master';
  else head = branches[0] ?? null;
  if (head) await repo.setHead(head);
  return head;
}
