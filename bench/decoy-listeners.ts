/**
 * The decoy listeners with real clients: Postgres logins (`pg`) and DNS lookups (Node's resolver),
 * each with a live canary's secret against an unknown one (the baseline) in the same run. An
 * attacker must not be able to tell them apart by time, and every live attempt must be recorded.
 * A run is one pool of `--attempts` attempts of each kind, alternating, so that both meet the same
 * load (the live ones' recording included), and lasts until their hits are recorded; each round
 * has two, one timing the unknown attempts (the baseline), one the live ones, until resolved
 * (bench/support/rounds.ts). The report gives the latency of both, their ratio, the CPU per
 * attempt of the mix in every part of the stack (the listeners and the API run in this process,
 * beside the clients), and the hits recorded against the live attempts made.
 *
 *   npm run bench:listeners -- [--attempts 200] [--concurrency 10] [--min-rounds 5] [--max-rounds 15]
 */
import { Resolver } from 'node:dns/promises';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../src/app';
import { startPublicListeners } from '../src/canaries/listeners/public-listeners';
import { loadConfig } from '../src/config';
import { ALL_INDEXES } from '../src/db/indexes';
import { connectMongo, ensureIndexes } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { freePort } from '../tools/stack';
import { pool } from './support/latency';
import { interleave, printComparison, roundOptions, type Variant } from './support/rounds';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  options: {
    attempts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '10' },
  },
  allowPositionals: true,
  strict: false,
});
const ATTEMPTS = Number(values.attempts);
const CONCURRENCY = Number(values.concurrency);
const ZONE = 'canary.bench.example';

async function main(): Promise<void> {
  const stack = await startWorkerStack('listeners', {
    PUBLIC_HOST: '127.0.0.1',
    TRIPWIRE_HOST: '127.0.0.1',
    DECOY_POSTGRES_PORT: String(await freePort()),
    DECOY_SMTP_PORT: '0',
    DNS_PORT: String(await freePort()),
    CANARY_DNS_DOMAIN: ZONE,
    DNS_ANSWER_IPV4: '192.0.2.1',
  });
  const config = loadConfig(stack.env);
  const db = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(db.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  const logger = pino({ level: 'warn' });
  const api = createApp({ config, logger, mongo: db, temporal });
  const listeners = await startPublicListeners(config, api, logger);
  try {
    await stack.ready();
    const email = `bench-${Date.now()}@example.com`;
    const password = 'benchmark password 123';
    await request(api.app).post('/api/auth/signup').send({ email, password });
    const login = await request(api.app).post('/api/auth/login').send({ email, password });
    const { token } = login.body as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    const plant = async (kind: string) =>
      (await request(api.app).post('/api/canaries').set(auth).send({ kind })).body as {
        canary_id: string;
        value: string;
      };
    const database = await plant('database_url');
    const dns = await plant('dns');
    const unknownUrl = new URL(database.value);
    // Neither half known: the user name is a token too.
    unknownUrl.username = 'svc_unknown';
    unknownUrl.password = 'not-a-canary-password';

    const pgLogin = (url: string) => async () => {
      const started = performance.now();
      const client = new Client({ connectionString: url });
      await client.connect().then(
        () => Promise.reject(new Error('the decoy let a login in')),
        (err: { code?: string }) => {
          if (err.code !== '28P01') throw err;
        },
      );
      return performance.now() - started;
    };
    const resolver = new Resolver({ timeout: 2_000, tries: 1 });
    resolver.setServers([`127.0.0.1:${listeners.ports.dns}`]);
    const lookup = (name: (i: number) => string) => async (i: number) => {
      const started = performance.now();
      await resolver.resolve4(name(i));
      return performance.now() - started;
    };

    const cpu = stack.cpu();
    const hits = db.db.collection('threat_hits');
    const compare = async (
      label: string,
      unknown: (i: number) => Promise<number>,
      live: (i: number) => Promise<number>,
      canaryId: string,
    ) => {
      const before = await hits.countDocuments({ canaryId });
      let made = 0;
      /**
       * One pool of ATTEMPTS attempts of each kind, alternating, so that both kinds meet the same
       * load (the live ones' recording included); the run reports the latencies of one kind.
       */
      const mixed =
        (timed: 'unknown' | 'live'): Variant =>
        async () => {
          const from = made;
          made += ATTEMPTS;
          const latencies: number[] = [];
          const run = await pool(2 * ATTEMPTS, CONCURRENCY, async (i) => {
            const kind = i % 2 ? 'live' : 'unknown';
            const ms = await (kind === 'live' ? live : unknown)(from + (i >> 1));
            if (kind === timed) latencies.push(ms);
            return ms;
          });
          await api.tripwires.flush();
          return { ops: 2 * ATTEMPTS, latencies, seconds: run.seconds };
        };
      const comparison = await interleave(
        { 'unknown secret (baseline)': mixed('unknown'), 'live canary': mixed('live') },
        cpu,
        // Every run is the same mix: only the latency of one kind against the other is resolved.
        { ...roundOptions, resolve: ['p50'] },
      );
      const recorded = (await hits.countDocuments({ canaryId })) - before;
      printComparison(
        `${label}: each run ${ATTEMPTS} attempts of each kind alternating, ${CONCURRENCY} at a time, its row timing one kind (ops and CPU are of all the run's attempts); ${recorded} hits recorded of ${made} live attempts; api is this process (listeners, API and clients)`,
        comparison,
      );
    };
    console.error(`Postgres logins, ${ATTEMPTS} a round each way, ${CONCURRENCY} at a time…`);
    await compare(
      'Postgres login (pg)',
      pgLogin(unknownUrl.toString()),
      pgLogin(database.value),
      database.canary_id,
    );
    console.error(`DNS lookups, ${ATTEMPTS} a round each way…`);
    // Distinct names below the token, so no cache answers for the listener.
    await compare(
      'DNS A lookup (UDP)',
      lookup((i) => `n${i}.unknown-label.${ZONE}`),
      lookup((i) => `n${i}.${dns.value}`),
      dns.canary_id,
    );
  } finally {
    await listeners.close();
    await api.flush();
    await db.client.close();
    await temporal.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
