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
