// Project uploads (GitLab's FileUploader / UploadService / Banzai::UploadsFinder): files attached to
// markdown, named by a random 32-hex secret and the sanitised file name, stored in the blob store. Who may
// do what: anyone who can see the project uploads (signed in) and reads them by secret; Maintainers
// list, fetch by id and delete them (GitLab's admin_upload / destroy_upload).
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/connect.ts';
import type { ProjectRow, UploadRow, UserRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import { queueBlobDeletion } from '../blobs/blob-deletions.ts';
import type { BlobStore } from '../../storage/blob-store.ts';
import type { Actor } from '../access/actor.ts';
import type { Resolver, ResolvedProject } from '../access/resolve.ts';
import type { SettingsService } from '../settings/settings.service.ts';

export interface UploadsDeps {
  db: Db;
  store: BlobStore;
  resolve: Resolver;
  settings: SettingsService;
}

export interface UploadView {
  row: UploadRow;
  uploadedBy: Pick<UserRow, 'id' | 'username' | 'name'> | null;
}

/** 32 hex characters (SecureRandom.hex) */
export const SECRET_RE = /^[0-9a-f]{32}$/;
const MAX_FILENAME = 255;

/**
 * CarrierWave::SanitizedFile: the base name, every character outside [[:word:]] . - + replaced by `_`.
 * Null when nothing usable is left (a name of dots only, or too long).
 */
export function sanitizeFilename(name: string): string | null {
  const baseName = name.split(/[/\\]/).pop() ?? '';
  const clean = baseName.replace(/[^\p{L}\p{M}\p{N}_.+-]/gu, '_');
  if (!clean || /^\.+$/.test(clean) || clean.length > MAX_FILENAME) return null;
  return clean;
}

/** A file name as it may appear in an upload URL (what sanitizeFilename can produce). */
export function isUploadFilename(name: string): boolean {
  return sanitizeFilename(name) === name;
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  avif: 'image/avif',
  tif: 'image/tiff',
  tiff: 'image/tiff',
};
const MEDIA_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  ogv: 'video/ogg',
  mp3: 'audio/mpeg',
  oga: 'audio/ogg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  flac: 'audio/flac',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
};

const extOf = (filename: string): string => {
  const i = filename.lastIndexOf('.');
  return i > 0 ? filename.slice(i + 1).toLowerCase() : '';
};

/** Gitlab::FileTypeDetection: images, videos and audio are embedded (![…]); SVG too (dangerous_embeddable). */
export function isEmbeddable(filename: string): boolean {
  const ext = extOf(filename);
  return ext in IMAGE_TYPES || ext in MEDIA_TYPES || ext === 'svg';
}

/**
 * How a stored file is served: raster images, video and audio inline with their type; anything else
 * (HTML, SVG, scripts, documents) as an attachment of type application/octet-stream, so that a browser
 * never renders it on the instance's origin.
 */
export function servedAs(filename: string): { contentType: string; inline: boolean } {
  const ext = extOf(filename);
  const t = IMAGE_TYPES[ext] ?? MEDIA_TYPES[ext];
  return t ? { contentType: t, inline: true } : { contentType: 'application/octet-stream', inline: false };
}

export function uploadUrl(row: Pick<UploadRow, 'secret' | 'filename'>): string {
  return `/uploads/${row.secret}/${row.filename}`;
}

/** FileMarkdownLinkBuilder: the alt text is the name without its extension for embedded files. */
export function markdownName(filename: string): string {
  if (!isEmbeddable(filename)) return filename;
  const i = filename.lastIndexOf('.');
  return i > 0 ? filename.slice(0, i) : filename;
}

export function markdownLink(row: Pick<UploadRow, 'secret' | 'filename'>): string {
  const link = `[${markdownName(row.filename).replace(/]/g, '\\]')}](${uploadUrl(row)})`;
  return isEmbeddable(row.filename) ? `!${link}` : link;
}

const mayAdmin = (p: ResolvedProject): boolean => p.access.abilities.has('admin_project');

export class UploadsService {
  constructor(private readonly d: UploadsDeps) {}

  /** The size limit of one upload in bytes (max_attachment_size, in MiB). */
  async maxBytes(): Promise<number> {
    const s = await this.d.settings.get();
    return Math.max(1, Number(s.max_attachment_size) || 100) * 1024 * 1024;
  }

  /** POST /projects/:id/uploads: the project must be visible (404) and the caller signed in (the route). */
  async project(actor: Actor, id: string): Promise<ResolvedProject> {
    return this.d.resolve.project(actor, id);
  }

  /** Stores a spooled file for the project. */
  async create(actor: Actor, p: ResolvedProject, file: { path: string; size: number; filename: string }): Promise<UploadView> {
    const filename = sanitizeFilename(file.filename);
    if (!filename) throw Errors.param('file is invalid');
    if (file.size > (await this.maxBytes())) throw Errors.tooLarge();
    const secret = randomBytes(16).toString('hex');
    const key = `uploads/${p.project.id}/${secret}`;
    await this.d.store.putFile(key, file.path, { contentType: servedAs(filename).contentType });
    try {
      const row = await this.d.db.kysely
        .insertInto('uploads')
        .values({
          project_id: p.project.id,
          secret,
          filename,
          size: file.size,
          store_key: key,
          uploaded_by_user_id: actor.user?.id ?? null,
          created_at: nowIso(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { row, uploadedBy: actor.user ? { id: actor.user.id, username: actor.user.username, name: actor.user.name } : null };
    } catch (e) {
      await this.d.store.delete(key).catch(() => {});
      throw e;
    }
  }

  /** GET /projects/:id/uploads (Maintainers): newest first, as Banzai::UploadsFinder orders them. */
  async listQuery(actor: Actor, id: string) {
    const p = await this.d.resolve.project(actor, id);
    if (!mayAdmin(p)) throw Errors.forbidden();
    return this.d.db.kysely
      .selectFrom('uploads')
      .leftJoin('users', 'users.id', 'uploads.uploaded_by_user_id')
      .select([
        'uploads.id',
        'uploads.project_id',
        'uploads.secret',
        'uploads.filename',
        'uploads.size',
        'uploads.store_key',
        'uploads.uploaded_by_user_id',
        'uploads.created_at',
        'users.username as user_username',
        'users.name as user_name',
      ])
      .where('uploads.project_id', '=', p.project.id)
      .orderBy('uploads.id', 'desc');
  }

  /** By id (Maintainers; "404 Not found" for an unknown id, GitLab's RecordNotFound). */
  async byId(actor: Actor, id: string, uploadId: number): Promise<UploadRow> {
    const p = await this.d.resolve.project(actor, id);
    if (!mayAdmin(p)) throw Errors.forbidden();
    const row = await this.d.db.kysely.selectFrom('uploads').selectAll().where('project_id', '=', p.project.id).where('id', '=', uploadId).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  /** By secret and file name, for whoever can see the project; null when there is no such upload. */
  async bySecret(project: ProjectRow, secret: string, filename: string): Promise<UploadRow | null> {
    if (!SECRET_RE.test(secret) || !isUploadFilename(filename)) return null;
    const row = await this.d.db.kysely
      .selectFrom('uploads')
      .selectAll()
      .where('project_id', '=', project.id)
      .where('secret', '=', secret)
      .where('filename', '=', filename)
      .executeTakeFirst();
    return row ?? null;
  }

  /** DELETE by id: Maintainers; an unknown id is 404 "Not found". */
  async deleteById(actor: Actor, id: string, uploadId: number): Promise<void> {
    await this.remove(await this.byId(actor, id, uploadId));
  }

  /** DELETE by secret and file name: Maintainers; a missing upload is Uploads::DestroyService's 400. */
  async deleteBySecret(actor: Actor, id: string, secret: string, filename: string): Promise<void> {
    const p = await this.d.resolve.project(actor, id);
    if (!mayAdmin(p)) throw Errors.forbidden();
    const row = await this.bySecret(p.project, secret, filename);
    if (!row) throw Errors.badRequest("The resource that you are attempting to access does not exist or you don't have permission to perform this action.");
    await this.remove(row);
  }

  private async remove(row: UploadRow): Promise<void> {
    await this.d.db.kysely.transaction().execute(async (trx) => {
      await trx.deleteFrom('uploads').where('id', '=', row.id).execute();
      await queueBlobDeletion(trx, [row.store_key]);
    });
  }

  /** The stored bytes (null when the blob is gone). */
  async open(row: UploadRow): Promise<Readable | null> {
    return this.d.store.get(row.store_key);
  }
}
