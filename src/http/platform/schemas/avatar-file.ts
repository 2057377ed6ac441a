// The `avatar` parameter of user, group and project create/update and of PUT /user/avatar.
import type { AvatarFile } from '../../../domain/avatars/avatars.service.ts';
import { Errors } from '../../../lib/errors.ts';
import { uploadedFileNames } from '../../plugins/malformed.ts';

/** The `avatar` parameter of a multipart body: a file part (a Buffer), else Grape's "avatar is invalid". */
export function avatarFile(value: unknown): AvatarFile | undefined {
  if (value === undefined) return undefined;
  if (!Buffer.isBuffer(value)) throw Errors.param('avatar is invalid');
  return { data: value, filename: uploadedFileNames.get(value) ?? 'avatar' };
}
