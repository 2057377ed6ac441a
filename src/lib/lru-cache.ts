// A small LRU of promises for values that never change once computed (they are keyed by what they are
// made of: commit ids, blob ids): concurrent misses of one key share one computation; a failure is not
// remembered.
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
    p.catch(() => this.map.delete(key));
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    return p;
  }

  /** Drops `key` if it still holds `value` (a value its owner chose not to keep). */
  forget(key: string, value: Promise<V>): void {
    if (this.map.get(key) === value) this.map.delete(key);
  }
}
