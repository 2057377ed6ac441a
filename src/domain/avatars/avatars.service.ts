// Uploaded avatars of users, groups and projects (GitLab's Avatarable + AvatarUploader): at most
// 200 KiB, an image by name (GitLab's SAFE_IMAGE_EXT) and by content (its magic bytes), kept in the
// blob store under avatars/<model>/<id>/<file name> and served at GitLab's path
// /uploads/-/system/<model>/avatar/<id>/<file name>. The row's avatar_url holds that absolute URL.
import type { Readable } from 'node:stream';
import type { Db } from '../../db/connect.ts';
import { Errors } from '../../lib/errors.ts';
import type { BlobStore } from '../../storage/blob-store.ts';

export type AvatarModel = 'user' | 'group' | 'project';

/** Avatarable::MAXIMUM_FILE_SIZE */
export const AVATAR_MAX_BYTES = 200 * 1024;
/** AvatarUploader::SAFE_IMAGE_EXT */
export const SAFE_IMAGE_EXT = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'] as const;

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon',
  webp: 'image/webp',
};

/** The image formats by their first bytes. */
function sniff(data: Buffer): string | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => data[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (starts(0xff, 0xd8, 0xff)) return 'jpeg';
  if (data.subarray(0, 6).toString('latin1') === 'GIF87a' || data.subarray(0, 6).toString('latin1') === 'GIF89a') return 'gif';
  if (starts(0x42, 0x4d)) return 'bmp';
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return 'tiff';
  if (starts(0x00, 0x00, 0x01, 0x00)) return 'ico';
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return null;
}

/** CarrierWave's sanitized file name, within what blob keys allow; never `.`/`..`, never empty. */
export function sanitizeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[.-]+/, '');
  return clean && clean !== '.' && clean !== '..' ? clean.slice(-200) : 'avatar';
}

export interface AvatarFile {
  data: Buffer;
  filename: string;
}

const extOf = (name: string) => (/\.([A-Za-z0-9]+)$/.exec(name)?.[1] ?? '').toLowerCase();

/** The model errors of an avatar (`{avatar: [...]}`), empty when it is acceptable. */
export function avatarErrors(file: AvatarFile): string[] {
  const errors: string[] = [];
  const ext = extOf(file.filename);
  if (!(SAFE_IMAGE_EXT as readonly string[]).includes(ext) || !sniff(file.data)) {
    errors.push(`file format is not supported. Please try one of the following supported formats: ${SAFE_IMAGE_EXT.join(', ')}`);
  }
  if (file.data.length > AVATAR_MAX_BYTES) errors.push('is too big (should be at most 200 KiB)');
  return errors;
}

const TABLE = { user: 'users', group: 'namespaces', project: 'projects' } as const;

export class AvatarsService {
  constructor(
    private readonly db: Db,
    private readonly store: BlobStore,
    private readonly externalUrl: string,
  ) {}

  /** 400 {"message":{"avatar":[…]}} unless acceptable (run before any other write). */
  check(file: AvatarFile | undefined): void {
    if (!file) return;
    const errors = avatarErrors(file);
    if (errors.length) throw Errors.invalid({ avatar: errors });
  }

  url(model: AvatarModel, id: number, filename: string): string {
    return `${this.externalUrl}/uploads/-/system/${model}/avatar/${id}/${filename}`;
  }

  /**
   * Stores the avatar of `model` `id` and records its URL on the row (replacing any earlier one, whose
   * blob is removed); answers the URL.
   */
  async save(model: AvatarModel, id: number, file: AvatarFile): Promise<string> {
    this.check(file);
    const name = sanitizeFileName(file.filename);
    const previous = await this.current(model, id);
    await this.store.put(`avatars/${model}/${id}/${name}`, file.data, { contentType: CONTENT_TYPES[extOf(name)] });
    const url = this.url(model, id, name);
    await this.db.kysely
      .updateTable(TABLE[model] as 'users')
      .set({ avatar_url: url })
      .where('id', '=', id)
      .execute();
    if (previous && previous !== name) await this.store.delete(`avatars/${model}/${id}/${previous}`);
    return url;
  }

  /** The file name of the current uploaded avatar, or null. */
  private async current(model: AvatarModel, id: number): Promise<string | null> {
    const row = await this.db.kysely
      .selectFrom(TABLE[model] as 'users')
      .select('avatar_url')
      .where('id', '=', id)
      .executeTakeFirst();
    const prefix = `${this.externalUrl}/uploads/-/system/${model}/avatar/${id}/`;
    return row?.avatar_url?.startsWith(prefix) ? row.avatar_url.slice(prefix.length) : null;
  }

  /** The current avatar's bytes and type when `filename` is its name; null otherwise. */
  async open(model: AvatarModel, id: number, filename: string): Promise<{ body: Readable; contentType: string; size: number } | null> {
    const name = await this.current(model, id);
    if (!name || name !== filename) return null;
    const key = `avatars/${model}/${id}/${name}`;
    const [body, stat] = await Promise.all([this.store.get(key), this.store.stat(key)]);
    if (!body || !stat) return null;
    return { body, contentType: CONTENT_TYPES[extOf(name)] ?? 'application/octet-stream', size: stat.size };
  }
}
