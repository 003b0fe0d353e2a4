import type { Variant } from './rounds';

/** Runs `count` tasks, `concurrency` at a time; each returns its latency in ms. */
export async function pool(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<number>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) latencies.push(await task(next++));
    }),
  );
  return {
    latencies: latencies.sort((a, b) => a - b),
    seconds: (performance.now() - started) / 1000,
  };
}

/** The p-th percentile of ascending latencies. */
export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * A variant of `n` operations a round, one at a time, each timed and counting `per` operations
 * (records in a batch); each round goes on from the index where the last one stopped.
 */
export function sequential(n: number, op: (i: number) => Promise<unknown>, per = 1): Variant {
  let from = 0;
  return async () => {
    const latencies: number[] = [];
    for (let i = from; i < from + n; i++) {
      const started = performance.now();
      await op(i);
      latencies.push(performance.now() - started);
    }
    from += n;
    return { ops: n * per, latencies };
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `steps` calls of `step`, one after another, each timed; `paced`, at `perSecond` a second (else
 * as fast as they go, to warm up).
 */
export async function timedSteps(
  steps: number,
  perSecond: number,
  paced: boolean,
  step: (n: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  for (let n = 0; n < steps; n++) {
    const t0 = performance.now();
    await step(n);
    latencies.push(performance.now() - t0);
    if (paced) await sleep(Math.max(0, started + ((n + 1) * 1000) / perSecond - performance.now()));
  }
  return { latencies, seconds: (performance.now() - started) / 1000 };
}
