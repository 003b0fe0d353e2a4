/**
 * A stack in the state a running service is in before anything is measured, and the database's
 * deferred work counted in the run that caused it.
 *
 * A freshly started JVM (the embedded database) compiles its hot code for minutes. In the first
 * 50-alert rounds of `bench:alert-path`, its JIT compiler threads took more CPU than the commands
 * they compiled, and all of it went to the variants that use the database (the alerts), none to the
 * engine's floor, which does not. A deployed database compiled that code long ago.
 */
import {
  deltaBetween,
  jitCompilerSeconds,
  processSeconds,
  type CpuReading,
  type Part,
} from './cpu';
import type { CpuMeter } from './rounds';

/** The stack is warm once the database's JIT compiler takes less than this share of its CPU. */
const WARM_COMPILER_SHARE = 0.05;

/**
 * Runs `batch` (the benchmark's own operations, unmeasured) until the database's JIT compiler
 * takes under 5 % of its CPU in two batches in a row, at least `minBatches` times (for the Node.js
 * processes' own compilation) and at most `maxBatches`. A database that is not a JVM (`mongod`, or
 * one given by MONGODB_URI) compiles nothing, so it takes `minBatches`.
 * @returns a line for the benchmark's report
 */
export async function warmUp(
  batch: () => Promise<unknown>,
  databasePid: number | undefined,
  { minBatches = 2, maxBatches = 60 } = {},
): Promise<string> {
  const shares: number[] = [];
  let warm = false;
  const read = () =>
    databasePid === undefined
      ? { all: 0, compiler: 0 }
      : { all: processSeconds(databasePid), compiler: jitCompilerSeconds(databasePid) };
  while (shares.length < maxBatches) {
    const before = read();
    await batch();
    const after = read();
    const all = after.all - before.all;
    const share = all > 0 ? (after.compiler - before.compiler) / all : 0;
    shares.push(share);
    console.error(
      `warm-up batch ${shares.length}: the database's JIT compiler took ${percent(share)} of its CPU`,
    );
    // Two batches in a row: the compiler works in bursts, between which a batch may fall.
    warm = shares.length >= 2 && shares.slice(-2).every((s) => s < WARM_COMPILER_SHARE);
    if (warm && shares.length >= minBatches) break;
  }
  const [first, last] = [shares[0]!, shares[shares.length - 1]!];
  return warm
    ? `warm-up: ${shares.length} batches, until the database's JIT compiler took under ${percent(WARM_COMPILER_SHARE)} of its CPU in two in a row (${percent(first)} in the first)`
    : `warm-up: ${shares.length} batches (the most), the database's JIT compiler still at ${percent(last)} of its CPU in the last (${percent(first)} in the first)`;
}

const percent = (share: number) => `${Math.round(share * 100)} %`;

/** The window over which the database's CPU is compared with its rate at rest. */
const WINDOW_MS = 2500;
const POLL_MS = 250;
/** Windows measured at rest (20 s). */
const REST_WINDOWS = 8;
/** A database still busy after this long is reported, and the run goes on. */
const SETTLE_AT_MOST_MS = 30_000;
/** One clock tick of /proc's CPU times. */
const TICK_SECONDS = 0.01;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The database's CPU at rest (an API's own timers read it now and then), from eight windows of
 * 2.5 s, and a wait for it to be back there after a run: until a 2.5 s window costs it at most
 * twice its rest plus a clock tick. Every run waits for it, so what a run's writes left the
 * database to do counts in that run and not in the next variant's: the embedded server commits
 * every second, and compacts the chunks a burst of writes replaced in a pass of its once-a-second
 * timer that finds no write since the one before (1–2 s after the burst; tools/mongo-server
 * `GroupCommit`).
 *
 * Given the stack's meter, it also measures every part's CPU at rest over the same windows, and
 * each wait returns what the stack spends at rest over it (pollers, timers), to be left out of the
 * run: the wait lasts longer after some variants' runs than after others' (a run that wrote more
 * leaves the database more to do), and a part's idle CPU over it is not the run's.
 */
export async function databaseSettler(databasePid: number | undefined, stack?: CpuMeter) {
  const read = () => stack?.read() ?? new Map<Part, number>();
  if (databasePid === undefined) {
    return { restMs: 0, settled: () => Promise.resolve(new Map<Part, number>()) };
  }
  const windows: { database: number; parts: CpuReading }[] = [];
  for (let i = 0; i < REST_WINDOWS; i++) {
    const before = { database: processSeconds(databasePid), parts: read() };
    await sleep(WINDOW_MS);
    windows.push({
      database: processSeconds(databasePid) - before.database,
      parts: deltaBetween(before.parts, read()),
    });
  }
  // A low quantile: the first windows may still hold the compaction the warm-up left.
  const low = (values: number[]) => values.sort((a, b) => a - b)[2]!;
  const rest = low(windows.map((w) => w.database));
  const restPerSecond = new Map(
    (stack?.parts() ?? []).map((part) => [
      part,
      low(windows.map((w) => w.parts.get(part) ?? 0)) / (WINDOW_MS / 1000),
    ]),
  );
  const busy = 2 * rest + TICK_SECONDS;
  const polls = WINDOW_MS / POLL_MS;
  return {
    /** CPU ms the database spends at rest per window. */
    restMs: rest * 1000,
    /** Waits until the database is at rest; the stack's CPU at rest over the wait, by part. */
    async settled(): Promise<CpuReading> {
      const started = performance.now();
      const readings = [processSeconds(databasePid)];
      const atRest = () => {
        const n = readings.length;
        return n > polls && readings[n - 1]! - readings[n - 1 - polls]! <= busy;
      };
      for (let waited = 0; waited < SETTLE_AT_MOST_MS && !atRest(); waited += POLL_MS) {
        await sleep(POLL_MS);
        readings.push(processSeconds(databasePid));
      }
      if (!atRest()) {
        console.error(`the database was still busy ${SETTLE_AT_MOST_MS / 1000} s after a run`);
      }
      const seconds = (performance.now() - started) / 1000;
      return new Map([...restPerSecond].map(([part, perSecond]) => [part, perSecond * seconds]));
    },
  };
}
