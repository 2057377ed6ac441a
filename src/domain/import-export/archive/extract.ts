// Archives are untrusted: extraction into a fresh directory refuses what could escape it or exhaust
// the machine. Owner: the archive-safety part of issue 17.

export interface ExtractLimits {
  /** max_decompressed_archive_size (MiB → bytes here); 0 = unlimited */
  maxBytes: number;
  /** decompress_archive_file_timeout (s → ms here); 0 = unlimited */
  timeoutMs: number;
}

/** The archive cannot be used: the import fails with this message in import_error. */
export class ArchiveError extends Error {}

/**
 * Extracts the .tar.gz `file` into `dest` (created, must not exist). Only regular files and directories;
 * refuses (ArchiveError, and removes `dest`) absolute paths, `..` segments, symlinks, hard links, device
 * files, more than maxBytes decompressed, more than timeoutMs, and anything that is not gzip+tar.
 */
export async function extractArchive(_file: string, _dest: string, _limits: ExtractLimits): Promise<void> {
  throw new Error('not implemented');
}
