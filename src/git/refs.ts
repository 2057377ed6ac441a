// Ref and revision names from users, checked before they reach git (git-check-ref-format rules).

/** A branch or tag name as `git check-ref-format --branch` accepts it. */
export function isValidRefName(name: string): boolean {
  if (!name || name.length > 255 || name === '@' || name === 'HEAD') return false;
  if (name.startsWith('-') || name.startsWith('/') || name.endsWith('/') || name.endsWith('.') || name.endsWith('.lock')) return false;
  if (name.includes('..') || name.includes('//') || name.includes('@{')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return false;
  return name.split('/').every((c) => c !== '' && !c.startsWith('.') && !c.endsWith('.lock'));
}

/**
 * A revision a user may name: a branch, a tag, a full or abbreviated SHA, optionally `HEAD`.
 * No revision syntax (`~`, `^`, `:`, `@{…}`), which also keeps paths and options out.
 */
export function isValidRevision(rev: string): boolean {
  if (rev === 'HEAD') return true;
  if (/^[0-9a-f]{4,64}$/i.test(rev)) return true;
  return isValidRefName(rev) || (/^refs\/(heads|tags)\//.test(rev) && isValidRefName(rev));
}

export const ZERO_SHA = '0000000000000000000000000000000000000000';
export const BRANCH_PREFIX = 'refs/heads/';
export const TAG_PREFIX = 'refs/tags/';
