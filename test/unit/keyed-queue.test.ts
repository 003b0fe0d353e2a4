import { KeyedQueue } from '../../src/keyed-queue';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedQueue', () => {
  it('when tasks share a key, then each starts after the previous one ended, failures included', async () => {
    const queue = new KeyedQueue();
    const events: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        events.push(`start ${name}`);
        await tick();
        events.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      queue.run('k', task('a', true)),
      queue.run('k', task('b')),
      queue.run('k', task('c')),
    ]);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
  });

  it('when keys differ, then tasks overlap', async () => {
    const queue = new KeyedQueue();
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await tick();
      events.push(`end ${name}`);
    };
    await Promise.all([queue.run('a', task('a')), queue.run('b', task('b'))]);
    expect(events.slice(0, 2)).toEqual(['start a', 'start b']);
  });
});
