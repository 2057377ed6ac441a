// The repository lock of a component (Weblate's WeblateLock around every repository write): one
// operation at a time per component within this process; a caller that cannot get it within the
// timeout gets 423 (Errors.locked: Weblate's body, reference §1.3) instead of waiting without end.

export class LockTimeout extends Error {
  constructor(readonly scope: string) {
    super(`Could not obtain the repository lock for ${scope} to perform the operation.`);
  }
}

export class TimedLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly running = new Set<string>();

  /** whether an operation holds the lock of `key` now */
  isHeld(key: string): boolean {
    return this.running.has(key);
  }

  /** Runs `fn` alone for `key`; LockTimeout when the lock is not free within `timeoutMs`. */
  async run<T>(key: string, scope: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    let timer: NodeJS.Timeout | undefined;
    const got = await Promise.race([
      prev.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!got) {
      // our place in the line is given up: whoever comes next waits only for those before us
      release();
      throw new LockTimeout(scope);
    }
    this.running.add(key);
    try {
      return await fn();
    } finally {
      this.running.delete(key);
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
