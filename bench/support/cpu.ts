/**
 * CPU time (user + system) and resident memory (Linux /proc) of each process of the stack a
 * benchmark started, by its part: the API, the worker, the Temporal dev server, the database, and
 * this process when it is only the benchmark's client. Each part is its process and its children
 * (tsx's esbuild beside a worker), so a benchmark reports what one unit of work (or an idle wait)
 * costs in every part.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

export const PARTS = ['api', 'worker', 'temporal', 'database', 'client'] as const;
export type Part = (typeof PARTS)[number];
export type CpuReading = Map<Part, number>;

interface Stat {
  pid: number;
  ppid: number;
  seconds: number;
}

/** The fields of a /proc `stat` file after the name (in parentheses, which may hold spaces). */
const statFields = (text: string) => text.slice(text.lastIndexOf(')') + 2).split(' ');

/** User + system CPU seconds from a process's or a thread's `stat` fields. */
const cpuSeconds = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / TICKS;

function stat(pid: number): Stat | undefined {
  try {
    const fields = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return { pid, ppid: Number(fields[1]), seconds: cpuSeconds(fields) };
  } catch {
    return undefined; // gone meanwhile
  }
}

/** One process's own CPU seconds so far (its threads, not its children); 0 once it is gone. */
export function processSeconds(pid: number): number {
  return stat(pid)?.seconds ?? 0;
}

/**
 * A process's CPU seconds so far by thread name, numbered threads of one kind together
 * (`V8Worker`, `tokio-runtime-worker`, …; Linux keeps the first 15 characters of a name); empty
 * once it is gone.
 */
export function threadSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName; // gone
  }
  for (const tid of threads) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim().replace(/\d+$/, '');
      const seconds = cpuSeconds(statFields(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
      byName.set(name, (byName.get(name) ?? 0) + seconds);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return byName;
}

/**
 * CPU seconds so far of a JVM's JIT compiler threads (HotSpot names them `C1 CompilerThre…` and
 * `C2 CompilerThre…`); 0 for any other process.
 */
export function jitCompilerSeconds(pid: number): number {
  let total = 0;
  for (const [name, seconds] of threadSeconds(pid)) {
    if (/^C\d CompilerThre/.test(name)) total += seconds;
  }
  return total;
}

/** Resident memory (MB) of one process: `VmRSS` of /proc/<pid>/status. */
function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0; // gone meanwhile
  }
}

/**
 * Reads the parts whose root process ids it is given (a part left out, such as a database given
 * by MONGODB_URI, is not read). A part's children count with it unless they are another part's
 * root: the benchmark process is the parent of every other part.
 */
export class StackCpu {
  constructor(private readonly roots: Partial<Record<Part, number | undefined>>) {}

  /** CPU seconds so far, by part. */
  read(): CpuReading {
    return this.sum((s) => s.seconds);
  }

  /** Resident memory (MB) now, by part. */
  rssMb(): Map<Part, number> {
    return this.sum((s) => rssMb(s.pid));
  }

  /** The parts this meter reads, in table order. */
  parts(): Part[] {
    return PARTS.filter((part) => this.roots[part] !== undefined);
  }

  /** Sums a value of each process by part. */
  private sum(value: (s: Stat) => number): Map<Part, number> {
    const all = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map((entry) => stat(Number(entry)))
      .filter((s): s is Stat => s !== undefined);
    const children = new Map<number, Stat[]>();
    for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
    const rootPids = new Set(Object.values(this.roots).filter((p) => p !== undefined));
    const sums = new Map<Part, number>();
    for (const part of PARTS) {
      const root = this.roots[part];
      if (root === undefined) continue;
      let total = 0;
      const queue = all.filter((s) => s.pid === root);
      while (queue.length) {
        const s = queue.pop()!;
        total += value(s);
        queue.push(...(children.get(s.pid) ?? []).filter((c) => !rootPids.has(c.pid)));
      }
      sums.set(part, total);
    }
    return sums;
  }
}

/**
 * What each key grew by between two readings: a part's or thread's CPU seconds, or a command's
 * count.
 */
export function deltaBetween<K>(before: Map<K, number>, after: Map<K, number>): Map<K, number> {
  return new Map([...after].map(([part, s]) => [part, s - (before.get(part) ?? 0)]));
}
