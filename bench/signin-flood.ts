/**
 * A real user's sign-in and an unrelated API call (`GET /api/users/me`) while 20 connections send
 * wrong passwords, as ratios of the same calls with no flood, measured in the same run:
 *
 *   npm run bench:signin -- --duration 20 --rounds 2
 *
 * Three floods: one account from one source (the attack in issue 21), many accounts from one
 * source, and many accounts from many sources (a botnet: no per-source streak catches it, the
 * failure budget per process does). Sources are told apart by X-Forwarded-For, with
 * TRUST_PROXY=loopback. The user signs in from their usual browser, as a browser would: with the
 * device cookie their first sign-in was given.
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { options, post, withBenchServer } from './support/harness';
import { pct } from './support/latency';

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

void withBenchServer(async ({ url }) => {
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
  console.log(
    `\nload average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} before the run; ` +
      `${options.connections} flood connections, ${options.duration} s per phase, ` +
      `${options.rounds} round(s); the user's sign-ins and /users/me run one at a time throughout\n`,
  );
  console.log(
    '| Phase | sign-in p50 ms | p95 ms | p50 vs idle | /users/me p50 ms | p95 ms | p50 vs idle | user refusals | flood answers |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (let round = 1; round <= options.rounds; round++) {
    let idle: { signIn: number; me: number } | undefined;
    for (const [name, flood] of Object.entries(floods)) {
      console.error(`round ${round}/${options.rounds}: ${name} for ${options.duration} s…`);
      const { signIn, me, answers } = await phase(url, user, flood);
      const p = (sorted: number[], at: number) => (sorted.length ? pct(sorted, at) : NaN);
      const [signInP50, meP50] = [p(signIn.latencies, 50), p(me.latencies, 50)];
      idle ??= { signIn: signInP50, me: meP50 };
      const floodAnswers = Object.entries(answers)
        .map(([status, n]) => `${n} × ${status}`)
        .join(', ');
      console.log(
        `| ${name} | ${signInP50.toFixed(0)} | ${p(signIn.latencies, 95).toFixed(0)} | ` +
          `${(signInP50 / idle.signIn).toFixed(2)}× | ${meP50.toFixed(1)} | ` +
          `${p(me.latencies, 95).toFixed(1)} | ${(meP50 / idle.me).toFixed(2)}× | ` +
          `${signIn.failures} of ${signIn.failures + signIn.latencies.length} sign-ins, ` +
          `${me.failures} calls | ${floodAnswers || '–'} |`,
      );
    }
  }
  console.log(
    `\nload average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} after the run`,
  );
}, 'api');
