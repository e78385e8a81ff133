/**
 * Ordinary work shares the database; a dump takes it alone. A dump waits for the transactions already
 * open to end (they are short by rule) and holds back new work until it is done, so pg_dump never runs
 * inside someone else's transaction on PGlite's single session.
 */
export class Gate {
  private shared = 0;
  private exclusive: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  /** Enters at once (undefined) unless a dump runs; then the returned promise resolves on entry. */
  enter(): Promise<void> | undefined {
    if (!this.exclusive) {
      this.shared++;
      return undefined;
    }
    return this.enterAfterDumps();
  }

  private async enterAfterDumps(): Promise<void> {
    // Each pass waits for one dump to finish; another can only start after a dump ends, so this ends.
    while (this.exclusive) await this.exclusive;
    this.shared++;
  }

  leave(): void {
    this.shared--;
    if (this.shared === 0) this.drained?.();
  }

  async alone<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    let release!: () => void;
    this.exclusive = new Promise((resolve) => (release = resolve));
    try {
      if (this.shared > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      return await work();
    } finally {
      this.drained = undefined;
      this.exclusive = undefined;
      release();
    }
  }
}
