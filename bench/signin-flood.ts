/**
 * A real user's sign-in and an unrelated API call (`GET /api/users/me`) while 20 connections send
 * wrong passwords, as ratios of the same calls with no flood: the phases take turns round by
 * round, `--duration` seconds each, until resolved (bench/support/rounds.ts). The first table's
 * operations are every request the API answered (the flood's and the user's), with the CPU each
 * cost in every part of the stack; its p50 is the user's sign-in. The second gives /users/me and
 * the answers.
 *
 *   npm run bench:signin -- [--duration 5] [--min-rounds 5] [--max-rounds 15]
 *
 * Three floods: one account from one source (the attack in issue 21), many accounts from one
 * source, and many accounts from many sources (a botnet: no per-source streak catches it, the
 * failure budget per process does). Sources are told apart by X-Forwarded-For, with
 * TRUST_PROXY=loopback. The user signs in from their usual browser, as a browser would: with the
 * device cookie their first sign-in was given.
 */
import { randomUUID } from 'node:crypto';
import { options, post, withBenchServer } from './support/harness';
import { pct } from './support/latency';
import { interleave, median, printComparison, type Variant } from './support/rounds';

const PASSWORD = 'correct horse battery staple';
const USER_SOURCE = '203.0.113.10';

interface Probe {
  latencies: number[];
  failures: number;
}

async function loop(stop: () => boolean, call: () => Promise<Response>): Promise<Probe> {
  const probe: Probe = { latencies: [], failures: 0 };
  while (!stop()) {
    const started = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (res.ok) probe.latencies.push(performance.now() - started);
    else probe.failures++;
  }
  probe.latencies.sort((a, b) => a - b);
  return probe;
}

type Flood = { email: () => string; source: () => string } | undefined;

const randomOctet = () => Math.floor(Math.random() * 256);

const login = (url: string, who: string, password: string, source: string, cookie = '') =>
  fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': source, cookie },
    body: JSON.stringify({ email: who, password }),
  });

interface User {
  email: string;
  token: string;
  deviceCookie: string;
}

async function phase(url: string, user: User, flood: Flood) {
  const until = performance.now() + options.duration * 1000;
  const stop = () => performance.now() > until;
  const answers: Record<number, number> = {};
  const floods = flood
    ? Array.from({ length: options.connections }, async () => {
        while (!stop()) {
          const res = await login(url, flood.email(), 'not the password', flood.source());
          await res.arrayBuffer();
          answers[res.status] = (answers[res.status] ?? 0) + 1;
        }
      })
    : [];
  const [signIn, me] = await Promise.all([
    loop(stop, () => login(url, user.email, PASSWORD, USER_SOURCE, user.deviceCookie)),
    loop(stop, () =>
      fetch(`${url}/api/users/me`, { headers: { authorization: `Bearer ${user.token}` } }),
    ),
    ...floods,
  ]);
  return { signIn, me, answers };
}

void withBenchServer(async ({ url, cpu }) => {
  const email = `user-${randomUUID()}@example.com`;
  const victim = `victim-${randomUUID()}@example.com`;
  for (const who of [email, victim]) {
    await post(`${url}/api/auth/signup`, { email: who, password: PASSWORD });
  }
  const first = await login(url, email, PASSWORD, USER_SOURCE);
  const { token } = (await first.json()) as { token: string };
  const deviceCookie = first.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('svc_device='));
  if (!first.ok || !deviceCookie)
    throw new Error(`first sign-in: ${first.status}, no device cookie`);
  const user: User = { email, token, deviceCookie };

  const floods: Record<string, Flood> = {
    'no flood (idle)': undefined,
    'one account, one source': { email: () => victim, source: () => '203.0.113.66' },
    'many accounts, one source': {
      email: () => `nobody-${randomUUID()}@example.com`,
      source: () => '203.0.113.77',
    },
    'many accounts, many sources': {
      email: () => `nobody-${randomUUID()}@example.com`,
      source: () => `198.18.${randomOctet()}.${randomOctet()}`,
    },
  };
  // By phase, each round's /users/me p50 and what was refused or answered.
  const seen = new Map<
    string,
    { meP50: number[]; refusals: number; calls: number; answers: Record<string, number> }
  >();
  const variants: Record<string, Variant> = {};
  for (const [name, flood] of Object.entries(floods)) {
    const own = {
      meP50: [] as number[],
      refusals: 0,
      calls: 0,
      answers: {} as Record<string, number>,
    };
    seen.set(name, own);
    variants[name] = async () => {
      const { signIn, me, answers } = await phase(url, user, flood);
      own.meP50.push(me.latencies.length ? pct(me.latencies, 50) : NaN);
      own.refusals += signIn.failures + me.failures;
      own.calls += signIn.failures + signIn.latencies.length + me.failures + me.latencies.length;
      for (const [status, n] of Object.entries(answers)) {
        own.answers[status] = (own.answers[status] ?? 0) + n;
      }
      const flooded = Object.values(answers).reduce((a, b) => a + b, 0);
      return {
        ops:
          flooded + signIn.latencies.length + signIn.failures + me.latencies.length + me.failures,
        latencies: signIn.latencies,
      };
    };
  }
  const comparison = await interleave(variants, cpu);
  printComparison(
    `${options.connections} flood connections, ${options.duration} s per phase; ops are every request the API answered, p50 the user's sign-in (one at a time, throughout, beside /users/me)`,
    comparison,
  );
  const idle = seen.get(Object.keys(floods)[0]!)!.meP50;
  console.log(
    `\n> The same phases: the user's /users/me (medians over the ${comparison.rounds} rounds) and every answer\n`,
  );
  console.log('| Phase | /users/me p50 ms | p50 vs idle | user refusals | flood answers |');
  console.log('|---|---:|---:|---:|---|');
  for (const [name, own] of seen) {
    const answers = Object.entries(own.answers)
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ');
    console.log(
      `| ${name} | ${median(own.meP50).toFixed(1)} | ${median(own.meP50.map((p, i) => p / idle[i]!)).toFixed(2)}× | ${own.refusals} of ${own.calls} calls | ${answers || '–'} |`,
    );
  }
}, 'api');
