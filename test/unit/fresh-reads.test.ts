import { FreshReads } from '../../src/keys/fresh-reads';

/** A read whose answer is the store's value when the read *starts*, resolved by the test. */
function controlledStore() {
  let value = 'v1';
  const pending: (() => void)[] = [];
  const starts: string[] = [];
  const read = (key: string) => {
    const seen = value;
    starts.push(`${key}:${seen}`);
    return new Promise<string>((resolve) => pending.push(() => resolve(seen)));
  };
  const finishNext = async () => {
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { read, starts, finishNext, set: (v: string) => (value = v) };
}

describe('FreshReads', () => {
  it('when callers arrive during a read, then they share one later read, not the earlier one', async () => {
    const store = controlledStore();
    const reads = new FreshReads(store.read);
    const first = reads.load('k');
    store.set('v2'); // e.g. a revocation acknowledged after the first read started
    const second = reads.load('k');
    const third = reads.load('k');
    await store.finishNext();
    expect(await first).toBe('v1');
    await store.finishNext();
    expect(await second).toBe('v2');
    expect(await third).toBe('v2');
    expect(store.starts).toEqual(['k:v1', 'k:v2']);
  });

  it('when keys differ, then their reads are independent', async () => {
    const store = controlledStore();
    const reads = new FreshReads(store.read);
    const a = reads.load('a');
    const b = reads.load('b');
    await store.finishNext();
    await store.finishNext();
    expect([await a, await b]).toEqual(['v1', 'v1']);
    expect(store.starts).toEqual(['a:v1', 'b:v1']);
  });

  it('when a read fails, then its callers see the error and queued callers get a fresh read', async () => {
    let calls = 0;
    const reads = new FreshReads(async () => {
      calls += 1;
      await new Promise((r) => setImmediate(r));
      if (calls === 1) throw new Error('down');
      return 'ok';
    });
    const failing = reads.load('k');
    const queued = reads.load('k');
    await expect(failing).rejects.toThrow('down');
    await expect(queued).resolves.toBe('ok');
  });

  it('when nothing is in flight, then each call starts its own read', async () => {
    const store = controlledStore();
    const reads = new FreshReads(store.read);
    const one = reads.load('k');
    await store.finishNext();
    await one;
    const two = reads.load('k');
    await store.finishNext();
    await two;
    expect(store.starts).toHaveLength(2);
  });
});
