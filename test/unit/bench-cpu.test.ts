import { jitCompilerSeconds, processSeconds, threadSeconds } from '../../bench/support/cpu';

describe('threadSeconds', () => {
  test("charges a busy thread's CPU to its name, within the process's own", () => {
    const before = threadSeconds(process.pid);
    // Busy until this thread itself has run 0.3 s (a wall-clock loop runs less on a loaded machine).
    const start = process.threadCpuUsage();
    const ranUs = () => {
      const { user, system } = process.threadCpuUsage(start);
      return user + system;
    };
    while (ranUs() < 300_000);
    const after = threadSeconds(process.pid);
    const grown = [...after]
      .map(([name, seconds]) => seconds - (before.get(name) ?? 0))
      .sort((a, b) => b - a);
    expect(grown[0]).toBeGreaterThanOrEqual(0.25);
    const total = [...after.values()].reduce((sum, seconds) => sum + seconds, 0);
    // Threads that ended are in the process's figure only.
    expect(total).toBeLessThanOrEqual(processSeconds(process.pid) + 0.02);
  });

  test('a process that is gone has no threads, and a non-JVM no JIT compiler threads', () => {
    expect(threadSeconds(2 ** 22 + 1).size).toBe(0);
    expect(jitCompilerSeconds(process.pid)).toBe(0);
  });
});
