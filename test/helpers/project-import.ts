// Helpers of the project import tests: archives built here (tar.gz of VERSION, tree/project.json,
// tree/project/<relation>.ndjson and a git bundle of a bare repository), multipart uploads, waiting.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import type { TestApp } from './build-app.ts';
import { fixtureEnv } from './git.ts';
import { multipart } from './files.ts';

export interface ArchiveSpec {
  /** VERSION's content (null: no VERSION file) */
  version?: string | null;
  /** the bare repository bundled as project.bundle (none: no bundle) */
  bundleFrom?: string;
  /** tree/project.json (null: none) */
  projectJson?: Record<string, unknown> | null;
  /** tree/project/<relation>.ndjson: objects, or raw text */
  relations?: Record<string, Record<string, unknown>[] | string>;
}

/** A .tar.gz export archive as the spec says, built in the test's data directory. */
export async function makeArchive(ta: TestApp, spec: ArchiveSpec = {}): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(ta.dataDir, 'archive-src-'));
  const out = `${dir}.tar.gz`;
  try {
    const entries: string[] = [];
    if (spec.version !== null) {
      fs.writeFileSync(path.join(dir, 'VERSION'), spec.version ?? '0.2.4');
      entries.push('VERSION');
    }
    if (spec.projectJson !== null) {
      fs.mkdirSync(path.join(dir, 'tree', 'project'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'tree', 'project.json'), JSON.stringify(spec.projectJson ?? { description: 'from the archive', visibility_level: 0 }));
      for (const [rel, items] of Object.entries(spec.relations ?? {})) {
        fs.writeFileSync(
          path.join(dir, 'tree', 'project', `${rel}.ndjson`),
          typeof items === 'string' ? items : items.map((i) => `${JSON.stringify(i)}\n`).join(''),
        );
      }
      entries.push('tree');
    }
    if (spec.bundleFrom) {
      execFileSync('git', ['--git-dir', spec.bundleFrom, 'bundle', 'create', '--quiet', path.join(dir, 'project.bundle'), '--all'], {
        env: fixtureEnv(),
        stdio: 'pipe',
      });
      entries.push('project.bundle');
    }
    await tar.c({ gzip: true, cwd: dir, file: out, portable: true }, entries);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { force: true });
  }
}

/** POST /projects/import with these fields and (unless null) the archive as `file`. */
export async function postImport(ta: TestApp, headers: Record<string, string>, fields: Record<string, string>, archive: Buffer | null) {
  const body = multipart(archive ? { ...fields, file: archive } : fields, 'export.tar.gz');
  return ta.app.inject({ method: 'POST', url: '/api/v4/projects/import', headers: { ...headers, ...body.headers }, payload: body.payload });
}

/** GET /projects/:id/import after the imports of this process are done. */
export async function importStatus(ta: TestApp, id: number | string, headers: Record<string, string> = ta.root) {
  await ta.c.importExport.imports.idle();
  const r = await ta.app.inject({ method: 'GET', url: `/api/v4/projects/${encodeURIComponent(String(id))}/import`, headers });
  return { status: r.statusCode, body: r.json() };
}

/** Every ref of a bare repository with its object: `refs/heads/main <sha>` lines, sorted. */
export function refsOf(gitDir: string): string {
  return execFileSync('git', ['--git-dir', gitDir, 'for-each-ref', '--format=%(refname) %(objectname)'], { env: fixtureEnv() }).toString();
}

export async function setSettings(ta: TestApp, settings: Record<string, unknown>): Promise<void> {
  const r = await ta.app.inject({ method: 'PUT', url: '/api/v4/application/settings', headers: ta.root, payload: settings });
  if (r.statusCode !== 200) throw new Error(`settings: ${r.statusCode} ${r.body}`);
}

export const HEX32 = /^[0-9a-f]{32}$/;
