/**
 * Embedded database servers (tools/mongo-server), each started as tools/stack.ts starts it, taking
 * turns at the same writes: `bench:embedded-server` compares two builds, `bench:evidence-indexes`
 * two index sets. Each server first runs the writes, unmeasured, until its JIT compiler has
 * settled, and each run ends once every server is back at rest, so the commits and compaction a run
 * causes count in it (warm-up.ts). `database CPU` is every server's, all their threads: the ones at
 * rest add as little to any run.
 */
import { rm } from 'node:fs/promises';
import { MongoClient, type Db } from 'mongodb';
import { freePort, startLocalMongo, type LocalMongo, type MongoOptions } from '../../tools/stack';
import { processSeconds, type Part } from './cpu';
import { interleave, roundOptions, type Comparison, type Ratio, type RunResult } from './rounds';
import { databaseSettler, warmUp } from './warm-up';

export interface EmbeddedServer {
  mongo: LocalMongo;
  client: MongoClient;
  db: Db;
}

export const benchLog = (line: string) => console.error(`[bench] ${line}`);

/**
 * A server in `dataDir`, with a client on `bench`: of this tree's build unless `build` is given,
 * with the heap tools/stack.ts sizes from the file unless `heapMb` is.
 */
export async function startEmbeddedServer(
  dataDir: string,
  { build, heapMb }: Pick<MongoOptions, 'build' | 'heapMb'> = {},
): Promise<EmbeddedServer> {
  const port = await freePort();
  const mongo = await startLocalMongo({ dataDir, port, log: benchLog, build, heapMb });
  if (!mongo.description.startsWith('embedded')) {
    await mongo.stop();
    console.error('mongod is on PATH: this benchmark measures the embedded server');
    process.exit(2);
  }
  const client = await MongoClient.connect(mongo.address);
  return { mongo, client, db: client.db('bench') };
}

/** Each server's writes: `paced` as measured, or as fast as they go to warm it up. */
export interface ServerVariant {
  name: string;
  server: EmbeddedServer;
  run: (paced: boolean) => Promise<RunResult>;
}

/** The variants warmed up, then taking turns round by round (the first is the baseline). */
export async function interleaveServers(
  variants: ServerVariant[],
  { resolve }: { resolve?: Ratio[] } = {},
): Promise<Comparison> {
  const pids = variants.map((v) => v.server.mongo.process.child.pid!);
  for (const [i, variant] of variants.entries()) {
    const warm = await warmUp(() => variant.run(false), pids[i]);
    console.error(`> ${variant.name}: ${warm}`);
  }
  const cpu = {
    parts: (): Part[] => ['database'],
    read: () =>
      new Map<Part, number>([
        ['database', pids.reduce((sum, pid) => sum + processSeconds(pid), 0)],
      ]),
  };
  const settlers = await Promise.all(pids.map((pid) => databaseSettler(pid)));
  return interleave(Object.fromEntries(variants.map((v) => [v.name, () => v.run(true)])), cpu, {
    ...roundOptions,
    ...(resolve && { resolve }),
    settle: async () => {
      await Promise.all(settlers.map((s) => s.settled()));
    },
  });
}

/** Every server stopped and the folder holding their data removed. */
export async function stopEmbeddedServers(servers: EmbeddedServer[], work: string): Promise<void> {
  for (const server of servers) {
    await server.client.close(true);
    await server.mongo.stop();
  }
  await rm(work, { recursive: true, force: true });
}
