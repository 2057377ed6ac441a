// The scratch space of imports in `<dataDir>/tmp`: a project import works in `import-<project id>-*`, a
// relation import in `relation-import-<id>-*`, uploads are spooled as `*.upload`. A process killed in the
// middle leaves them (an extracted archive may be gigabytes): they are removed when `serve` or `worker`
// starts and by a worker round — a work directory once no job of its import runs under a live lease (another
// node's import in progress keeps its own), a spooled upload once nothing wrote to it for UPLOAD_STALE_MS.
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../../db/connect.ts';
import { nowIso } from '../../../lib/time.ts';

/** a spooled upload nobody wrote to for this long belongs to a request that is gone */
export const UPLOAD_STALE_MS = 3600_000;
export const WORK_DIR_SWEEP_MS = 5 * 60_000;

const WORK_DIR = /^(import|relation-import)-(\d+)-[^/]+$/;

/** Removes what killed imports and uploads left in `tmpRoot`; answers how many entries went. */
export async function removeStaleWork(db: Db, tmpRoot: string, kinds: { project: string; relation: string }): Promise<number> {
  const names = await readdir(tmpRoot).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const full = path.join(tmpRoot, name);
    const m = WORK_DIR.exec(name);
    if (m) {
      const id = Number(m[2]);
      const [kind, payload] = m[1] === 'import' ? [kinds.project, { project_id: id }] : [kinds.relation, { relation_import_id: id }];
      const running = await db.kysely
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', kind)
        .where('payload', '=', JSON.stringify(payload))
        .where('state', '=', 'running')
        .where('locked_until', '>=', nowIso())
        .executeTakeFirst();
      if (running) continue;
    } else if (name.endsWith('.upload')) {
      const st = await lstat(full).catch(() => null);
      if (!st?.isFile() || Date.now() - st.mtimeMs < UPLOAD_STALE_MS) continue;
    } else continue;
    await rm(full, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
