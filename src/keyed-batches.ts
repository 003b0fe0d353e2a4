import { KeyedQueue } from './keyed-queue';

interface Waiter<I, O> {
  item: I;
  resolve(result: O): void;
  reject(err: unknown): void;
}

/**
 * Group commit per key: items submitted for a key while its batch is running wait and then go
 * together in the next batch, so a busy key costs about one round trip per batch rather than one per
 * item, and batches of one key never overlap. `process` answers one result per item, in order; if
 * it throws, every item of that batch fails with the error. With `gatherMs`, a batch also takes
 * what arrives in that long after its first item (larger batches, each item that much later).
 */
export class KeyedBatches<I, O> {
  private readonly waiting = new Map<string, Waiter<I, O>[]>();
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly process: (key: string, items: I[]) => Promise<O[]>,
    private readonly gatherMs = 0,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(key);
      if (waiters) return void waiters.push({ item, resolve, reject });
      this.waiting.set(key, [{ item, resolve, reject }]);
      void this.queue.run(key, () => this.runBatch(key));
    });
  }

  private async runBatch(key: string): Promise<void> {
    if (this.gatherMs) await new Promise((r) => setTimeout(r, this.gatherMs));
    const waiters = this.waiting.get(key) ?? [];
    this.waiting.delete(key);
    try {
      const results = await this.process(
        key,
        waiters.map((w) => w.item),
      );
      waiters.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      waiters.forEach((w) => w.reject(err));
    }
  }
}
