// A bounded map (oldest entry evicted first) whose entries are valid only for the table versions they were computed from,
// and for at most `ttlMs` (values that also depend on the clock, such as lock expiry). With `size`, the entries'
// sizes (e.g. bytes) together stay within `maxSize` as well: a stream of distinct keys cannot fill the memory.
export class VersionedCache<V> {
  private entries = new Map<string, { stamp: string; at: number; value: V; size: number }>();
  private total = 0;
  constructor(
    private readonly max = 2000,
    private readonly ttlMs = 5000,
    private readonly bySize?: { size: (value: V) => number; maxSize: number },
  ) {}

  get(key: string, stamp: string, now = Date.now()): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.stamp !== stamp || now - e.at > this.ttlMs) {
      this.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, stamp: string, value: V, now = Date.now()): void {
    const size = this.bySize ? this.bySize.size(value) : 0;
    this.delete(key);
    if (this.bySize && size > this.bySize.maxSize / 8) return; // one entry never takes more than an eighth
    while (this.entries.size && (this.entries.size >= this.max || (this.bySize && this.total + size > this.bySize.maxSize)))
      this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { stamp, at: now, value, size });
    this.total += size;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  private delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.size;
  }
}
