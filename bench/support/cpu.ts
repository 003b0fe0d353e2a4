/**
 * CPU time and resident memory of this process and every process it started (Linux /proc), by
 * part of the stack, for a benchmark to report what one unit of work (or an idle wait) costs
 * across the whole stack.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

interface Stat {
  pid: number;
  ppid: number;
  name: string;
  seconds: number;
}

function stat(pid: string): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name is in parentheses and may hold spaces; the fields after it are space-separated.
    const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { pid: Number(pid), ppid: Number(fields[1]), name, seconds: ticks / TICKS };
  } catch {
    return undefined; // gone meanwhile
  }
}

/**
 * Which part of the stack a process is: this one is the API (with the benchmark's client and
 * receiver), `java` the embedded database, `temporal` the Temporal dev server, and any other the
 * worker (node names its main thread `MainThread`; tsx runs an esbuild beside it).
 */
const partOf = (s: Stat) =>
  s.pid === process.pid
    ? 'api'
    : s.name === 'java'
      ? 'database'
      : s.name === 'temporal'
        ? 'temporal'
        : 'worker';

/** This process and every process it started, each with its part of the stack. */
function stackProcesses(): (Stat & { part: string })[] {
  const all = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(stat)
    .filter((s): s is Stat => s !== undefined);
  const mine = new Set([process.pid]);
  // Parents come before their children often but not always: repeat until nothing is added.
  for (let added = true; added;) {
    added = false;
    for (const s of all) {
      if (!mine.has(s.pid) && mine.has(s.ppid)) added = mine.add(s.pid) && true;
    }
  }
  return all.filter((p) => mine.has(p.pid)).map((s) => ({ ...s, part: partOf(s) }));
}

/** Sums a value of each process by part of the stack. */
function byPart(value: (s: Stat) => number): Map<string, number> {
  const sums = new Map<string, number>();
  for (const s of stackProcesses()) sums.set(s.part, (sums.get(s.part) ?? 0) + value(s));
  return sums;
}

/** CPU seconds so far by part of the stack. */
export const stackCpu = () => byPart((s) => s.seconds);

/** Resident memory (MB) now by part of the stack: `VmRSS` of /proc/<pid>/status. */
export const stackRssMb = () =>
  byPart((s) => {
    try {
      const status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      return 0; // gone meanwhile
    }
  });

/** What each program spent between two readings. */
export function cpuBetween(before: Map<string, number>, after: Map<string, number>) {
  return new Map([...after].map(([name, s]) => [name, s - (before.get(name) ?? 0)]));
}
