/**
 * Coalesces concurrent reads of the same key without ever answering from a read that started
 * before the caller arrived. A caller that finds a read of its key in flight waits for the *next*
 * read, which starts once the current one ends and is shared by everyone who queued meanwhile.
 * Under load this turns N lookups of one API key into about one per database round trip, while a
 * revocation acknowledged before a request arrived is always seen by that request.
 */
export class FreshReads<V> {
  private readonly inFlight = new Map<string, Promise<V>>();
  private readonly queued = new Map<string, Promise<V>>();

  constructor(private readonly read: (key: string) => Promise<V>) {}

  load(key: string): Promise<V> {
    const queued = this.queued.get(key);
    if (queued) return queued;
    const current = this.inFlight.get(key);
    if (!current) return this.start(key);
    const next = current.then(
      () => this.startQueued(key),
      () => this.startQueued(key),
    );
    this.queued.set(key, next);
    return next;
  }

  private startQueued(key: string): Promise<V> {
    this.queued.delete(key);
    return this.start(key);
  }

  private start(key: string): Promise<V> {
    const read = this.read(key).finally(() => {
      if (this.inFlight.get(key) === read) this.inFlight.delete(key);
    });
    this.inFlight.set(key, read);
    return read;
  }
}
