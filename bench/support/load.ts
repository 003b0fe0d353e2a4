/**
 * The machine's load average around a benchmark's figures: these machines are shared, so a reader
 * needs it to tell a change from a busier hour.
 */
import { loadavg } from 'node:os';

/** `load average 0.52 0.61 0.70 before, 1.93 1.20 0.88 after` (over 1, 5 and 15 minutes). */
export function loadLine(before: number[], after: number[] = loadavg()): string {
  const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  return `load average ${loads(before)} before, ${loads(after)} after`;
}
