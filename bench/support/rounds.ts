/**
 * Variants of one benchmark measured in turns, round by round, with the CPU each operation cost
 * in every part of the stack beside its rate, until the ratios against the baseline (the first
 * variant) are resolved well enough that another run would agree within `tolerance`; then one
 * Markdown table with the load average the figures were taken under.
 *
 * The baseline runs between every two other runs (baseline, A, baseline, B, baseline, A, …), and
 * each run's ratios are taken against the mean of the baseline runs just before and after it. On
 * the shared machines a fixed piece of work costs up to 1.7 times as much CPU from one second to the
 * next, and its cost drifts over tens of seconds: in rounds of five variants run one after another,
 * the CPU of adjacent runs was correlated (0.4–0.8) and that of runs three apart was not (−0.05 to
 * 0.6), so a ratio against a baseline run further away carried the drift in between.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { deltaBetween, type CpuReading, type Part, type StackCpu } from './cpu';
import { pct } from './latency';
import { loadLine } from './load';

/** What `interleave` reads CPU from: a `StackCpu`, or parts summed over several (a group of workers). */
export type CpuMeter = Pick<StackCpu, 'read' | 'parts'>;

/**
 * What one run of a variant did: how many operations and, when timed, their latencies in ms, or
 * (from a tool that keeps a histogram) their 50th and 99th percentiles.
 */
export interface RunResult {
  ops: number;
  /**
   * How long the operations took, when the run goes on after them (until their effects have
   * settled, so that the CPU they caused is counted in their run); else the run's own time.
   */
  seconds?: number;
  latencies?: number[];
  p50?: number;
  p99?: number;
}

export type Variant = () => Promise<RunResult>;

/**
 * A variant with set-up before its run and tidying after it (alerts parked, then ended), both
 * outside what is measured.
 */
export interface StagedVariant {
  prepare?: () => Promise<void>;
  run: Variant;
  finish?: () => Promise<void>;
}

/**
 * `--min-rounds`, `--max-rounds` and `--tolerance` (a fraction), for every benchmark alike; one
 * whose ratios take more rounds to resolve on a loaded machine sets a higher `maxRounds` default.
 */
export function roundOptionsWith(
  { maxRounds = 15 }: { maxRounds?: number } = {},
  args = process.argv.slice(2),
) {
  const { values } = parseArgs({
    args,
    options: {
      'min-rounds': { type: 'string', default: '5' },
      'max-rounds': { type: 'string', default: String(maxRounds) },
      tolerance: { type: 'string', default: '0.1' },
    },
    strict: false,
    allowPositionals: true,
  });
  return {
    minRounds: Number(values['min-rounds']),
    maxRounds: Number(values['max-rounds']),
    tolerance: Number(values.tolerance),
  };
}

export const roundOptions = roundOptionsWith();

interface Sample {
  rate: number;
  p50: number | null;
  p99: number | null;
  /** CPU ms per operation by part, and over all parts. */
  cpu: Map<Part, number>;
  cpuAll: number;
  /** Another variant's run: the index of the baseline run just before it (the next one follows it). */
  baselineBefore?: number;
}

export interface Row {
  name: string;
  /** Medians over the rounds. */
  rate: number;
  p50: number | null;
  p99: number | null;
  cpu: Map<Part, number>;
  cpuAll: number;
  /** Medians of the per-run ratios, each against the baseline runs on either side of it. */
  rateRatio: number;
  p50Ratio: number | null;
  cpuRatio: number;
  /**
   * How far another run's ratios would be expected to land from these (fractions), for each ratio
   * resolved; empty for the baseline, and before three rounds.
   */
  agreement: Partial<Record<Ratio, number>>;
}

export interface Comparison {
  rows: Row[];
  rounds: number;
  /** A measurement that cannot take turns (a fill, a one-off peak): one run, nothing resolved. */
  oneOff?: boolean;
  parts: Part[];
  resolved: boolean;
  /** The ratios that had to be resolved. */
  resolving: Ratio[];
  load: { before: number[]; after: number[] };
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * The expected difference between the medians of two runs of `n` rounds, relative to the median:
 * the median's standard error is about 1.25 σ/√n, σ about IQR/1.35, and two runs differ by √2 of
 * that; twice it covers most pairs of runs.
 */
function agreementOf(ratios: number[]): number {
  const sorted = [...ratios].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.round(p * (sorted.length - 1))]!;
  const iqr = q(0.75) - q(0.25);
  return (2 * Math.SQRT2 * 1.25 * (iqr / 1.35)) / Math.sqrt(sorted.length) / median(sorted);
}

/**
 * Ratios of runs that both measured something: a run that spent no CPU tick (a no-op, or one too
 * short for the clock's 10 ms ticks) has no CPU ratio to resolve.
 */
const finite = (ratios: number[]) => ratios.filter((r) => Number.isFinite(r) && r > 0);

/** The ratios against the baseline that a comparison resolves. */
export type Ratio = 'rate' | 'p50' | 'cpu';

/**
 * Runs every variant once a round, in turns, for at least `minRounds` and until resolved: the
 * ratios in `resolve` (all three unless told; only the p50 where every run is the same mix of
 * work and a row times one kind of it).
 */
export async function interleave(
  variants: Record<string, Variant | StagedVariant>,
  cpu: CpuMeter,
  {
    resolve = ['rate', 'p50', 'cpu'],
    settle,
    ...options
  }: typeof roundOptions & {
    resolve?: Ratio[];
    /**
     * Awaited after every run, inside its CPU window and outside its time: what the run left the
     * stack to do (a database's compaction) counts in that run and not in the next variant's. It
     * may return what the stack spent at rest meanwhile, by part, which is not the run's.
     */
    settle?: () => Promise<CpuReading | void>;
  } = roundOptions,
): Promise<Comparison> {
  const names = Object.keys(variants);
  const [base, ...others] = names as [string, ...string[]];
  const samples = new Map(names.map((name) => [name, [] as Sample[]]));
  const loadBefore = loadavg();
  let rounds = 0;
  let resolved = false;
  const measure = async (name: string) => {
    console.error(`round ${rounds} (${options.minRounds}–${options.maxRounds}): ${name}…`);
    const variant = variants[name]!;
    const { prepare, run, finish } = typeof variant === 'function' ? { run: variant } : variant;
    await prepare?.();
    const before = cpu.read();
    const started = performance.now();
    const { ops, latencies, p50, p99, seconds: own } = await run();
    const seconds = own ?? (performance.now() - started) / 1000;
    const atRest = await settle?.();
    const spent = deltaBetween(before, cpu.read());
    for (const [part, s] of atRest ?? []) {
      spent.set(part, Math.max(0, (spent.get(part) ?? 0) - s));
    }
    await finish?.();
    const perOp = new Map([...spent].map(([part, s]) => [part, (s * 1000) / ops]));
    // Each run's own figures, so a reader can see which runs a median passed over.
    console.error(
      `  ${(ops / seconds).toPrecision(3)} ops/s; CPU ms/op ${[...perOp].map(([part, ms]) => `${part} ${ms.toPrecision(3)}`).join(', ')}`,
    );
    const sorted = latencies && [...latencies].sort((a, b) => a - b);
    const baseRuns = samples.get(base)!.length;
    samples.get(name)!.push({
      rate: ops / seconds,
      p50: sorted?.length ? pct(sorted, 50) : (p50 ?? null),
      p99: sorted?.length ? pct(sorted, 99) : (p99 ?? null),
      cpu: perOp,
      cpuAll: [...perOp.values()].reduce((a, b) => a + b, 0),
      ...(name !== base && { baselineBefore: baseRuns - 1 }),
    });
  };
  while (rounds < options.maxRounds && !resolved) {
    rounds++;
    if (rounds === 1 || !others.length) await measure(base);
    for (const name of others) {
      await measure(name);
      await measure(base);
    }
    // The spread of fewer than three rounds says nothing about the next run.
    resolved =
      rounds >= Math.max(options.minRounds, 3) &&
      names
        .slice(1)
        .every((name) =>
          Object.values(agreementsOf(samples, base, name, resolve)).every(
            (a) => a <= options.tolerance,
          ),
        );
  }
  const rows = names.map((name): Row => {
    const own = samples.get(name)!;
    const nullable = (pick: (s: Sample) => number | null) => {
      const values = own.map(pick).filter((v): v is number => v !== null);
      return values.length ? median(values) : null;
    };
    const ratios = pairedRatios(samples, base, name);
    return {
      name,
      rate: median(own.map((s) => s.rate)),
      p50: nullable((s) => s.p50),
      p99: nullable((s) => s.p99),
      cpu: new Map(cpu.parts().map((part) => [part, median(own.map((s) => s.cpu.get(part) ?? 0))])),
      cpuAll: median(own.map((s) => s.cpuAll)),
      rateRatio: median(ratios.rate),
      p50Ratio: ratios.p50.length ? median(ratios.p50) : null,
      cpuRatio: finite(ratios.cpu).length ? median(finite(ratios.cpu)) : Number.NaN,
      agreement: name === base || rounds < 3 ? {} : agreementsOf(samples, base, name, resolve),
    };
  });
  return {
    rows,
    rounds,
    parts: cpu.parts(),
    resolved,
    resolving: resolve,
    load: { before: loadBefore, after: loadavg() },
  };
}

/**
 * One run of something that cannot take turns with a baseline (a fill, a one-off memory peak):
 * its rate and CPU per operation in every part, with the load average it ran under.
 */
export async function runOnce(name: string, run: Variant, cpu: CpuMeter): Promise<Comparison> {
  const comparison = await interleave({ [name]: run }, cpu, {
    ...roundOptions,
    minRounds: 1,
    maxRounds: 1,
  });
  return { ...comparison, oneOff: true };
}

/**
 * Each run's rate, p50 (when both were timed) and CPU of `name` against the mean of the baseline
 * runs just before and after it (a baseline run against itself).
 */
function pairedRatios(samples: Map<string, Sample[]>, base: string, name: string) {
  const ref = samples.get(base)!;
  const pairs = samples.get(name)!.map((s) => {
    const i = s.baselineBefore;
    const [before, after] = i === undefined ? [s, s] : [ref[i]!, ref[i + 1]!];
    const mean = (pick: (b: Sample) => number | null) => {
      const [x, y] = [pick(before), pick(after)];
      return x === null || y === null ? null : (x + y) / 2;
    };
    return {
      s,
      rate: mean((b) => b.rate)!,
      p50: mean((b) => b.p50),
      cpuAll: mean((b) => b.cpuAll)!,
    };
  });
  return {
    rate: pairs.map(({ s, rate }) => s.rate / rate),
    p50: pairs.flatMap(({ s, p50 }) => (s.p50 !== null && p50 ? [s.p50 / p50] : [])),
    cpu: pairs.map(({ s, cpuAll }) => s.cpuAll / cpuAll),
  };
}

function agreementsOf(
  samples: Map<string, Sample[]>,
  base: string,
  name: string,
  resolve: Ratio[],
): Partial<Record<Ratio, number>> {
  const { rate, p50, cpu } = pairedRatios(samples, base, name);
  const ratios = { rate, p50, cpu: finite(cpu) };
  return Object.fromEntries(
    resolve.filter((r) => ratios[r].length).map((r) => [r, agreementOf(ratios[r])]),
  );
}

/** `rate ±12 % · CPU ±6 %`: each resolved ratio's expected difference between runs. */
const agreementLine = (agreement: Partial<Record<Ratio, number>>) =>
  Object.entries(agreement)
    .map(([ratio, a]) => `${ratio === 'cpu' ? 'CPU' : ratio} ±${(a * 100).toFixed(0)} %`)
    .join(' · ') || '–';

/**
 * The comparison as a Markdown table, with how it was taken. `unit` is that of the latencies and
 * the CPU per operation (µs for operations of microseconds, so that they do not read as 0.0).
 */
export function printComparison(
  title: string,
  { rows, rounds, parts, resolved, resolving, load, oneOff }: Comparison,
  { unit = 'ms' }: { unit?: 'ms' | 'µs' } = {},
): void {
  const scale = unit === 'µs' ? 1000 : 1;
  const fixed = (value: number | null, digits: number) =>
    value === null ? '–' : (value * scale).toFixed(digits);
  const how = oneOff
    ? 'one run (a one-off: nothing to take turns with)'
    : `median of ${rounds} interleaved rounds (${resolving.length < 3 ? `${resolving.join(' and ')} vs baseline ` : ''}${resolved ? 'resolved' : 'NOT resolved'} to ±${(roundOptions.tolerance * 100).toFixed(0)} % between runs)`;
  console.log(`\n> ${title}`);
  console.log(`> ${how}; ${loadLine(load.before, load.after)}\n`);
  console.log(
    `| Variant | ops/s | p50 ${unit} | p99 ${unit} | rate vs baseline | p50 vs baseline | ${parts.map((p) => `${p} CPU ${unit}/op`).join(' | ')} | all CPU ${unit}/op | CPU vs baseline | ± between runs |`,
  );
  console.log(`|---|${'---:|'.repeat(parts.length + 8)}`);
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.rate.toFixed(1)} | ${fixed(r.p50, 1)} | ${fixed(r.p99, 1)} | ${(r.rateRatio * 100).toFixed(0)} % | ${r.p50Ratio === null ? '–' : `${r.p50Ratio.toFixed(2)}×`} | ${parts.map((p) => fixed(r.cpu.get(p) ?? 0, 2)).join(' | ')} | ${fixed(r.cpuAll, 2)} | ${Number.isNaN(r.cpuRatio) ? '–' : `${r.cpuRatio.toFixed(2)}×`} | ${r.name === rows[0]!.name ? 'baseline' : agreementLine(r.agreement)} |`,
    );
  }
}
