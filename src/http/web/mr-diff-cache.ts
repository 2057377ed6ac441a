// Rendered diffs of merge requests, kept by what they are made of (project, base sha, head sha): the
// same two commits always give the same HTML, so a hit needs no git and no diff2html.
import { LruCache } from '../../lib/lru-cache.ts';
import type { SafeHtml } from '../../web/jsx/jsx-runtime.ts';

export const diffCache = new LruCache<SafeHtml>(64);
