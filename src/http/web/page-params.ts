// What the project pages (merge requests, pipelines) read from paths, queries and forms, leniently (a
// nonsense page number is page 1, a nonsense id is the 404 page), and the project their views link to.
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import type { ProjectRef } from '../../web/views/merge-requests/common.tsx';

/** One string from a query or form value (the first of a list), trimmed; '' when absent. */
export function str(v: unknown): string {
  if (Array.isArray(v)) return str(v[0]);
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
}

/** A page number from the query (1 when absent or nonsense), capped so offsets stay sane. */
export function pageOf(v: unknown): number {
  const s = str(v);
  const n = /^\d{1,5}$/.test(s) ? Number(s) : 1;
  return Math.max(1, n);
}

/** An iid or id from a path: positive 32-bit integers only, else null (a 404 page). */
export function idOf(v: unknown): number | null {
  const s = str(v);
  if (!/^\d{1,10}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 2_147_483_647 ? n : null;
}

/** The project as the merge request and pipeline views name and link it. */
export function projectRef(r: Pick<ResolvedProject, 'project' | 'namespace'>): ProjectRef {
  return {
    id: r.project.id,
    fullPath: `${r.namespace.full_path}/${r.project.path}`,
    name: r.project.name,
    defaultBranch: r.project.default_branch ?? 'main',
  };
}
