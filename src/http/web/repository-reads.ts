// Reads of the repository pages that no API route makes: GitLab's ExtractsRef (`<ref>/<path>` with
// slashes in both), the last commit of every entry of a directory (one `git log` walk, cached by
// (commit, path): immutable), and the history of a path a page at a time.
import type { RepoContext } from '../../domain/repository/context.ts';
import { repoPath } from '../../domain/repository/tree.ts';
import type { Commit } from '../../git/objects.ts';
import type { Repository } from '../../git/repository.ts';
import { BoundedMap } from '../../lib/bounded-map.ts';

export interface ExtractedRef {
  /** the ref as named in the URL (branch, tag or SHA) */
  ref: string;
  /** the commit it names */
  commit: string;
  /** the path after it ('' for the root), checked by repoPath */
  path: string;
}

/**
 * ExtractsRef#extract_ref: the longest prefix of `rest` that is a branch or tag, else a leading SHA;
 * null when no ref matches or the path cannot name anything (`..`, control characters …).
 */
export async function extractRef(repo: Repository, rest: string): Promise<ExtractedRef | null> {
  if (!rest || !repo.exists()) return null;
  const parts = rest.split('/');
  const refs = await repo.refs();
  const names = new Map<string, string>();
  // git's order for a short name: a tag before a branch
  for (const r of refs) if (r.kind === 'branch') names.set(r.short, r.commit);
  for (const r of refs) if (r.kind === 'tag') names.set(r.short, r.commit);
  let ref: string | null = null;
  let commit: string | null = null;
  let used = 0;
  for (let i = parts.length; i >= 1; i--) {
    const candidate = parts.slice(0, i).join('/');
    const sha = names.get(candidate);
    if (sha) {
      ref = candidate;
      commit = sha;
      used = i;
      break;
    }
  }
  if (!ref && /^[0-9a-f]{7,64}$/.test(parts[0]!)) {
    commit = await repo.resolveCommit(parts[0]!);
    if (commit) {
      ref = parts[0]!;
      used = 1;
    }
  }
  if (!ref || !commit) return null;
  const path = repoPath(parts.slice(used).join('/'));
  if (path === null) return null;
  return { ref, commit, path };
}

export interface LastCommit {
  sha: string;
  title: string;
  authoredAt: number;
  authorName: string;
}

/** (repository, commit, directory, entry) → the last commit that changed the entry ('' when none found) */
const lastCommits = new BoundedMap<string>(200_000);
/** the walk stops after this many commits: entries older than that show no last commit */
const WALK_MAX = 5_000;

/**
 * For each entry name of the directory `dir` at `commit`, the last commit that changed it: one
 * `git log --name-only` walk of the directory for the entries not cached yet, stopped once every one
 * is found. Cached per entry: a commit's history never changes.
 */
export async function lastCommitsOf(repo: Repository, commit: string, dir: string, names: string[]): Promise<Map<string, string>> {
  const keyOf = (name: string) => `${repo.gitDir}\0${commit}\0${dir}\0${name}`;
  const found = new Map<string, string>();
  const wanted = new Set<string>();
  for (const name of names) {
    const hit = lastCommits.get(keyOf(name));
    if (hit === undefined) wanted.add(name);
    else if (hit) found.set(name, hit);
  }
  if (!wanted.size) return found;
  const fresh = (await fromParent(repo, commit, dir, wanted)) ?? (await walk(repo, commit, dir, wanted));
  for (const name of wanted) {
    const sha = fresh.get(name) ?? '';
    lastCommits.set(keyOf(name), sha);
    if (sha) found.set(name, sha);
  }
  return found;
}

/**
 * The answers of a commit with one parent whose answers are known (the usual case after a push: the page
 * was seen before it): an entry whose object changed was last changed by this commit, the others keep
 * the parent's answer. Two tree reads from the long-lived cat-file process instead of a `git log` walk.
 */
async function fromParent(repo: Repository, commit: string, dir: string, wanted: Set<string>): Promise<Map<string, string> | null> {
  const parsed = await repo.commit(commit);
  if (!parsed || parsed.parents.length !== 1) return null;
  const parent = parsed.parents[0]!;
  const inherited = new Map<string, string>();
  for (const name of wanted) {
    const hit = lastCommits.get(`${repo.gitDir}\0${parent}\0${dir}\0${name}`);
    if (hit === undefined) return null;
    inherited.set(name, hit);
  }
  const [mine, theirs] = await Promise.all([repo.tree(commit, dir), repo.tree(parent, dir)]);
  if (!mine) return null;
  const before = new Map((theirs ?? []).map((e) => [e.name, e.sha]));
  const now = new Map(mine.map((e) => [e.name, e.sha]));
  const out = new Map<string, string>();
  for (const name of wanted) {
    const sha = now.get(name);
    out.set(name, sha !== undefined && before.get(name) === sha ? inherited.get(name)! : commit);
  }
  return out;
}

function walk(repo: Repository, commit: string, dir: string, wanted: Set<string>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const args = ['log', '--format=%x01%H', '--name-only', '--no-renames', '-z', `--max-count=${WALK_MAX}`, commit, '--'];
  if (dir) args.push(dir);
  const prefix = dir ? `${dir}/` : '';
  return new Promise<Map<string, string>>((resolve, reject) => {
    const child = repo.spawn(args, { env: { GIT_LITERAL_PATHSPECS: '1' } });
    let carry = '';
    let done = false;
    const consume = (chunk: string, final: boolean) => {
      const text = carry + chunk;
      const records = text.split('\x01');
      carry = final ? '' : records.pop()!;
      for (const rec of records) {
        const nul = rec.indexOf('\0');
        if (nul < 0) continue;
        const sha = rec.slice(0, nul);
        for (const file of rec
          .slice(nul + 1)
          .replace(/^\n/, '')
          .split('\0')) {
          if (!file.startsWith(prefix)) continue;
          const rel = file.slice(prefix.length);
          const slash = rel.indexOf('/');
          const name = slash < 0 ? rel : rel.slice(0, slash);
          if (wanted.has(name) && !found.has(name)) found.set(name, sha);
        }
      }
      if (found.size === wanted.size && !done) {
        done = true;
        child.stdout!.destroy();
        child.kill('SIGKILL');
        resolve(found);
      }
    };
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (s: string) => {
      if (!done) consume(s, false);
    });
    child.stderr!.resume();
    child.stdin!.end();
    child.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
    child.on('close', () => {
      if (done) return;
      consume('', true);
      done = true;
      resolve(found);
    });
  });
}

/** One page of the history of `path` (all files when '') from `commit`: `git log` with skip and count. */
export async function historyPage(
  ctx: RepoContext,
  commit: string,
  path: string,
  page: number,
  perPage: number,
): Promise<{ commits: Commit[]; hasNext: boolean }> {
  const args = ['log', '--format=%H', `--skip=${(page - 1) * perPage}`, `--max-count=${perPage + 1}`, commit, '--'];
  if (path) args.push(path);
  const { stdout } = await ctx.repo.run(args, { env: { GIT_LITERAL_PATHSPECS: '1' } });
  let shas = stdout.toString('utf8').split('\n').filter(Boolean);
  const hasNext = shas.length > perPage;
  if (hasNext) shas = shas.slice(0, perPage);
  const commits = (await Promise.all(shas.map((s) => ctx.repo.commit(s)))).filter((x): x is Commit => x !== null);
  return { commits, hasNext };
}

/** How many commits `commit` has (for the project home's stats), once per commit. */
const commitCounts = new BoundedMap<number>(10_000);
export async function commitCount(repo: Repository, commit: string): Promise<number> {
  const key = `${repo.gitDir}\0${commit}`;
  const hit = commitCounts.get(key);
  if (hit !== undefined) return hit;
  // one more than its only parent's, when that is known (a push of one commit onto a branch seen before)
  const parsed = await repo.commit(commit);
  const parentCount = parsed?.parents.length === 1 ? commitCounts.get(`${repo.gitDir}\0${parsed.parents[0]}`) : undefined;
  if (parentCount !== undefined) {
    commitCounts.set(key, parentCount + 1);
    return parentCount + 1;
  }
  const { stdout } = await repo.run(['rev-list', '--count', commit, '--']);
  const n = Number(stdout.toString('latin1').trim()) || 0;
  commitCounts.set(key, n);
  return n;
}

/** The last size measured per repository: shown while a new measurement runs (GitLab's statistics lag too). */
const lastSizes = new BoundedMap<number>(10_000);

/**
 * The repository's size on disk in bytes (objects), measured once per state of the refs; after a push
 * the previous figure is answered at once while the new one is measured in the background.
 */
export async function storageSize(repo: Repository): Promise<number> {
  const fresh = measureStorage(repo).then((n) => {
    lastSizes.set(repo.gitDir, n);
    return n;
  });
  const stale = lastSizes.get(repo.gitDir);
  if (stale === undefined) return fresh;
  fresh.catch(() => {});
  return stale;
}

function measureStorage(repo: Repository): Promise<number> {
  return repo.whileRefs('web:storage-size', async () => {
    const { stdout } = await repo.run(['count-objects', '-v']);
    let kib = 0;
    for (const line of stdout.toString('latin1').split('\n')) {
      const m = /^(size|size-pack): (\d+)/.exec(line);
      if (m) kib += Number(m[2]);
    }
    return kib * 1024;
  });
}
