// One export archive on disk (GitLab's Projects::ImportExport::ExportService savers, then
// Gitlab::ImportExport::Saver): VERSION, GITLAB_VERSION and GITLAB_REVISION, the tree (tree/index.ts), the
// repository's bundle (archive/bundle.ts), all tarred and gzipped into one file, streamed: the tree is
// written page by page, git writes the bundle, tar reads the files as it packs them.
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import type { ProjectRow } from '../../../db/schema.ts';
import { createBundle } from '../archive/bundle.ts';
import { BUNDLE_FILE, EXPORT_VERSION, GITLAB_REVISION_FILE, GITLAB_VERSION_FILE, TREE_DIR, VERSION_FILE } from '../archive/layout.ts';
import type { ImportExportDeps } from '../deps.ts';
import { writeTree } from '../tree/index.ts';

/** The archive would be larger than max_export_size (the export fails with this message). */
export class ExportTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super('The project size exceeds the export limit.');
  }
}

export interface BuildOptions {
  /** replaces the project's description in tree/project.json */
  description?: string;
  /** the largest archive allowed (bytes; 0: no limit) */
  maxBytes: number;
}

/**
 * Writes the archive's files under `dir` (created) and packs them into `file` (`.tar.gz`); answers the
 * archive's size. ExportTooLargeError as soon as the bundle or the archive passes `maxBytes` (the
 * partial file removed). The caller removes `dir`.
 */
export async function buildArchive(deps: ImportExportDeps, project: ProjectRow, dir: string, file: string, opts: BuildOptions): Promise<number> {
  await fs.promises.mkdir(dir, { recursive: true });
  await fs.promises.writeFile(path.join(dir, VERSION_FILE), EXPORT_VERSION);
  await fs.promises.writeFile(path.join(dir, GITLAB_VERSION_FILE), deps.config.gitlabVersion);
  await fs.promises.writeFile(path.join(dir, GITLAB_REVISION_FILE), deps.config.revision);
  await writeTree(deps, project, dir, { description: opts.description });
  const repo = deps.repos.repository(project);
  const bundle = path.join(dir, BUNDLE_FILE);
  const bundled = repo.exists() ? await createBundle(repo, bundle) : false;
  if (bundled && opts.maxBytes > 0 && (await fs.promises.stat(bundle)).size > opts.maxBytes) throw new ExportTooLargeError(opts.maxBytes);

  const entries = [VERSION_FILE, GITLAB_VERSION_FILE, GITLAB_REVISION_FILE, TREE_DIR, ...(bundled ? [BUNDLE_FILE] : [])].filter((e) =>
    fs.existsSync(path.join(dir, e)),
  );
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (opts.maxBytes > 0 && size > opts.maxBytes) done(new ExportTooLargeError(opts.maxBytes));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(tar.c({ gzip: true, cwd: dir, portable: true }, entries) as unknown as NodeJS.ReadableStream, counter, fs.createWriteStream(file));
  } catch (e) {
    await fs.promises.rm(file, { force: true });
    throw e;
  }
  return size;
}
