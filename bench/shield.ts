/**
 * `inspectMessage` latency on 4 KB messages built by repeating labelled messages (benign only,
 * malicious only, and a mix), against a baseline measured on the same messages in the same run:
 * one `String.prototype.includes` scan for a string that is never there (the cheapest possible
 * look at every character) and one `JSON.stringify` (what the route pays to answer anyway).
 * Also the worst case: 32 768-character adversarial inputs (the route's limit).
 *
 *   npm run bench:shield -- [--iterations 20000]
 */
import { parseArgs } from 'node:util';
import { credentialCandidates, inspectMessage } from '../src/shield/inspect';
import { loadLabelled } from '../tools/shield-eval';
import { pct } from './support/latency';

const { values } = parseArgs({
  options: { iterations: { type: 'string', default: '20000' } },
  allowPositionals: true,
  strict: false,
});
const ITERATIONS = Number(values.iterations);
const SIZE = 4096;

/** Messages of exactly SIZE characters: the texts, one after another, repeated, cut at SIZE. */
function build(texts: string[], count: number): string[] {
  const out: string[] = [];
  let i = 0;
  for (let n = 0; n < count; n++) {
    let message = '';
    while (message.length < SIZE) message += `${texts[i++ % texts.length]!}\n\n`;
    out.push(message.slice(0, SIZE));
  }
  return out;
}

function measure(messages: string[], iterations: number, fn: (m: string) => unknown) {
  for (let i = 0; i < Math.min(2000, iterations); i++) fn(messages[i % messages.length]!);
  const latencies = new Float64Array(iterations);
  let sink = 0;
  const started = performance.now();
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    const result = fn(messages[i % messages.length]!);
    latencies[i] = performance.now() - t;
    if (result) sink++;
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    p50: pct(sorted, 50),
    p95: pct(sorted, 95),
    p99: pct(sorted, 99),
    perSecond: iterations / seconds,
    sink,
  };
}

const labelled = loadLabelled();
const sets: [string, string[]][] = [
  [
    'benign',
    build(
      labelled.filter((m) => m.label === 'benign').map((m) => m.text),
      64,
    ),
  ],
  [
    'malicious',
    build(
      labelled.filter((m) => m.label === 'malicious').map((m) => m.text),
      64,
    ),
  ],
  [
    'mixed',
    build(
      labelled.map((m) => m.text),
      64,
    ),
  ],
];
const NEEDLE = '\u0000never-present\u0000';
/** Sub-10 µs figures in µs, the rest in ms, so the cheap baselines do not read as 0.000. */
const time = (x: number) => (x < 0.01 ? `${(x * 1000).toFixed(1)} µs` : `${x.toFixed(3)} ms`);

// Markdown tables, so `npm run bench:all` can carry them into docs/benchmarks.md.
console.log(
  `\n| ${SIZE}-character messages, ${ITERATIONS} runs per row | what | p50 | p95 | p99 | per s | p50 vs includes() | p50 vs JSON.stringify |`,
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const [name, messages] of sets) {
  const includes = measure(messages, ITERATIONS, (m) => m.includes(NEEDLE) || m.length);
  const stringify = measure(messages, ITERATIONS, (m) => JSON.stringify({ user_message: m }));
  const candidates = measure(messages, ITERATIONS, (m) => credentialCandidates(m));
  const inspect = measure(messages, ITERATIONS, (m) => inspectMessage(m));
  const rows: [string, ReturnType<typeof measure>][] = [
    ['includes() scan (baseline)', includes],
    ['JSON.stringify', stringify],
    ['credentialCandidates', candidates],
    ['inspectMessage', inspect],
  ];
  for (const [what, r] of rows) {
    console.log(
      `| ${name} | ${what} | ${time(r.p50)} | ${time(r.p95)} | ${time(r.p99)} | ${Math.round(r.perSecond)} | ${(r.p50 / includes.p50).toFixed(0)}× | ${(r.p50 / stringify.p50).toFixed(1)}× |`,
    );
  }
}

const MAX = 32_768;
const adversarial: [string, string][] = [
  ['one letter repeated', 'a'.repeat(MAX)],
  ['spaced letters', 'i g n o r e '.repeat(MAX / 12)],
  ['"ignore " repeated', 'ignore '.repeat(MAX / 7)],
  ['base64-ish run', 'QWxhZGRpbjpvcGVuIHNlc2FtZQ'.repeat(MAX / 26)],
  ['"![x](http://a?" repeated', '![x](http://a?'.repeat(MAX / 14)],
  ['"@" with letters', 'ab@cd.'.repeat(MAX / 6)],
  ['zero-width between letters', 'a\u200b'.repeat(MAX / 2)],
  ['"you " repeated', 'you '.repeat(MAX / 4)],
  [
    'labelled set, concatenated',
    labelled
      .map((m) => m.text)
      .join('\n')
      .slice(0, MAX),
  ],
];
console.log(`\n| Worst case, ${MAX}-character input, 50 runs | p50 | p99 |`);
console.log('|---|---:|---:|');
for (const [name, message] of adversarial) {
  const r = measure([message.slice(0, MAX)], 50, (m) => inspectMessage(m));
  console.log(`| ${name.replace(/\|/g, '\\|')} | ${time(r.p50)} | ${time(r.p99)} |`);
}
