// A bounded map (oldest entry evicted first) whose entries are valid only for the table versions they were computed from,
// and for at most `ttlMs` (values that also depend on the clock, such as lock expiry).
export class VersionedCache<V> {
  private entries = new Map<string, { stamp: string; at: number; value: V }>();
  constructor(
    private readonly max = 2000,
    private readonly ttlMs = 5000,
  ) {}

  get(key: string, stamp: string, now = Date.now()): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.stamp !== stamp || now - e.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, stamp: string, value: V, now = Date.now()): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { stamp, at: now, value });
  }

  clear(): void {
    this.entries.clear();
  }
}
