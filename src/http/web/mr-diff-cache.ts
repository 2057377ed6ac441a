// Rendered diffs of merge requests, kept by what they are made of (project, base sha, head sha): the
// same two commits always give the same HTML, so a hit needs no git and no diff2html. A small LRU;
// concurrent misses of one key share the one rendering.
import type { SafeHtml } from '../../web/jsx/jsx-runtime.ts';

export class LruCache<V> {
  private readonly map = new Map<string, Promise<V>>();

  constructor(private readonly max: number) {}

  get(key: string, make: () => Promise<V>): Promise<V> {
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const p = make();
    this.map.set(key, p);
    // a failure is not remembered
    p.catch(() => this.map.delete(key));
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    return p;
  }
}

export const diffCache = new LruCache<SafeHtml>(64);
