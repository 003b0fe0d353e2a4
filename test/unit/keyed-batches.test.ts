import { KeyedBatches } from '../../src/keyed-batches';

/** A process function that records its batches and finishes only when told to. */
function controlled() {
  const batches: { key: string; items: number[]; finish(fail?: Error): void }[] = [];
  const process = (key: string, items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push({
        key,
        items,
        finish: (fail) => (fail ? reject(fail) : resolve(items.map((i) => i * 10))),
      });
    });
  return { batches, process };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedBatches', () => {
  it('when items arrive while a batch runs, then they go together in the next one', async () => {
    const { batches, process } = controlled();
    const batcher = new KeyedBatches(process);
    const first = batcher.submit('a', 1);
    await tick();
    const rest = [2, 3, 4].map((i) => batcher.submit('a', i));
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.finish();
    await tick();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.finish();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it('when keys differ, then their batches run side by side', async () => {
    const { batches, process } = controlled();
    const batcher = new KeyedBatches(process);
    const both = [batcher.submit('a', 1), batcher.submit('b', 2)];
    await tick();
    expect(batches.map((b) => b.key)).toEqual(['a', 'b']);
    batches.forEach((b) => b.finish());
    expect(await Promise.all(both)).toEqual([10, 20]);
  });

  it('when a batch fails, then its items fail and the next batch still runs', async () => {
    const { batches, process } = controlled();
    const batcher = new KeyedBatches(process);
    const failing = [batcher.submit('a', 1)];
    await tick();
    const later = batcher.submit('a', 2);
    batches[0]!.finish(new Error('database down'));
    await expect(failing[0]).rejects.toThrow('database down');
    await tick();
    batches[1]!.finish();
    expect(await later).toBe(20);
  });

  it('when a batch gathers, then items arriving within its window join it', async () => {
    const { batches, process } = controlled();
    const batcher = new KeyedBatches(process, 40);
    const early = [batcher.submit('a', 1)];
    await new Promise((r) => setTimeout(r, 10));
    early.push(batcher.submit('a', 2));
    expect(batches).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 60));
    expect(batches.map((b) => b.items)).toEqual([[1, 2]]);
    batches[0]!.finish();
    expect(await Promise.all(early)).toEqual([10, 20]);
  });
});
