/**
 * `inspectMessage` on 4 KB messages built by repeating labelled messages (benign only, malicious
 * only, and a mix), against a baseline on the same messages: one `String.prototype.includes` scan
 * for a string that is never there (the cheapest possible look at every character), beside one
 * `JSON.stringify` (what the route pays to answer anyway). Also the worst case: 32 768-character
 * adversarial inputs (the route's limit) against ordinary text of that length.
 *
 * The functions run in this process, so their CPU is the client's. Each variant runs for
 * `--seconds` a round, the variants taking turns until resolved (bench/support/rounds.ts); calls
 * of microseconds are timed in batches (their p99 is then that of batch means).
 *
 *   npm run bench:shield -- [--seconds 0.5] [--min-rounds 5] [--max-rounds 15]
 */
import { parseArgs } from 'node:util';
import { credentialCandidates, inspectMessage } from '../src/shield/inspect';
import { loadLabelled } from '../tools/shield-eval';
import { StackCpu } from './support/cpu';
import { interleave, printComparison, type Variant } from './support/rounds';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '0.5' } },
  allowPositionals: true,
  strict: false,
});
const SECONDS = Number(values.seconds);
const SIZE = 4096;
const cpu = new StackCpu({ client: process.pid });

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

/** The shortest stretch one latency sample covers: far above the timer's resolution. */
const SAMPLE_MS = 0.02;

/**
 * Calls `fn` on the messages in turn for SECONDS (after a warm-up). Calls cheaper than SAMPLE_MS
 * are timed in batches that take about that long, each batch giving its mean as the latency of
 * its calls, so that the timer's resolution and its own cost do not stand in for theirs.
 */
function timed(messages: string[], fn: (m: string) => unknown): Variant {
  const warmUp = performance.now();
  for (let i = 0; i < 2000; i++) fn(messages[i % messages.length]!);
  const batch = Math.max(1, Math.ceil(SAMPLE_MS / ((performance.now() - warmUp) / 2000)));
  return () => {
    const latencies: number[] = [];
    let calls = 0;
    let sink = 0;
    const until = performance.now() + SECONDS * 1000;
    while (performance.now() < until) {
      const t = performance.now();
      for (let j = 0; j < batch; j++) if (fn(messages[calls++ % messages.length]!)) sink++;
      // Batches are all of one size, so their means weigh alike.
      latencies.push((performance.now() - t) / batch);
    }
    // The results are used, so no call is optimised away.
    if (sink < 0) console.error(sink);
    return Promise.resolve({ ops: calls, latencies });
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

async function main(): Promise<void> {
  for (const [name, messages] of sets) {
    printComparison(
      `${name}: ${SIZE}-character messages, each variant ${SECONDS} s a round`,
      await interleave(
        {
          'includes() scan (baseline)': timed(messages, (m) => m.includes(NEEDLE) || m.length),
          'JSON.stringify': timed(messages, (m) => JSON.stringify({ user_message: m })),
          credentialCandidates: timed(messages, (m) => credentialCandidates(m)),
          inspectMessage: timed(messages, (m) => inspectMessage(m)),
        },
        cpu,
      ),
      { unit: 'µs' },
    );
  }

  const MAX = 32_768;
  const adversarial: [string, string][] = [
    [
      'labelled set, concatenated (baseline)',
      labelled
        .map((m) => m.text)
        .join('\n')
        .slice(0, MAX),
    ],
    ['one letter repeated', 'a'.repeat(MAX)],
    ['spaced letters', 'i g n o r e '.repeat(MAX / 12)],
    ['"ignore " repeated', 'ignore '.repeat(MAX / 7)],
    ['base64-ish run', 'QWxhZGRpbjpvcGVuIHNlc2FtZQ'.repeat(MAX / 26)],
    ['"![x](http://a?" repeated', '![x](http://a?'.repeat(MAX / 14)],
    ['"@" with letters', 'ab@cd.'.repeat(MAX / 6)],
    ['zero-width between letters', 'a\u200b'.repeat(MAX / 2)],
    ['"you " repeated', 'you '.repeat(MAX / 4)],
  ];
  printComparison(
    `Worst case: inspectMessage on ${MAX}-character inputs, each ${SECONDS} s a round`,
    await interleave(
      Object.fromEntries(
        adversarial.map(([name, message]) => [
          name.replace(/\|/g, '\\|'),
          timed([message.slice(0, MAX)], (m) => inspectMessage(m)),
        ]),
      ),
      cpu,
    ),
    { unit: 'µs' },
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
