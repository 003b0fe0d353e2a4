/**
 * The fault suite's stack of real processes: a database and a Temporal dev server of the file's
 * own, APIs and a worker as child processes (`node --import tsx src/main.ts` / `src/worker.ts`, as
 * `npm run dev` starts them), and an HTTPS receiver for their alerts. Tests kill any of them
 * (SIGKILL or SIGTERM) and start them again.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import {
  freePort,
  spawnManaged,
  startLocalMongo,
  startLocalTemporal,
  type LocalMongo,
  type ManagedProcess,
  type Service,
} from '../../tools/stack';
import { DELIVERY_ID_HEADER } from '../../src/alerts/providers/provider';
import { PASSWORD, uniqueEmail } from './accounts';
import { Receiver } from './receiver';

const ROOT = resolve(__dirname, '../..');

export interface ChildNode {
  entry: string;
  env: Record<string, string>;
  proc: ManagedProcess;
}

export interface ApiNode extends ChildNode {
  port: number;
}

/** An account with a webhook channel for alerts, one for channel tests, and URL canaries. */
export interface FaultAccount {
  accountId: string;
  token: string;
  alertPath: string;
  tests: string;
  /** Each canary's `/r/<token>` path. */
  paths: string[];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined); fails with `what` after `ms`. */
export async function until<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(250);
  }
}

export class ProcessStack {
  readonly logs: string[] = [];
  readonly apis: ApiNode[] = [];
  mongo!: LocalMongo;
  temporal!: Service & { process: ManagedProcess };
  receiver!: Receiver;
  client!: MongoClient;
  db!: Db;
  worker!: ChildNode;

  private constructor(
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {}

  /**
   * Database, Temporal and receiver, then `apis.length` APIs (each with its extra environment)
   * and one worker. `env` is shared by every child.
   */
  static async start(
    name: string,
    options: {
      apis: Record<string, string>[];
      env?: Record<string, string>;
      /** Runs once the data folder exists, before any API starts: may change `apis`' settings. */
      beforeApis?: (dataDir: string, apis: Record<string, string>[]) => Promise<void>;
    },
  ): Promise<ProcessStack> {
    const dataDir = await mkdtemp(join(tmpdir(), `fault-${name}-`));
    await options.beforeApis?.(dataDir, options.apis);
    const stack = new ProcessStack(dataDir, {});
    const log = (line: string) => stack.logs.push(line);
    [stack.mongo, stack.temporal, stack.receiver] = await Promise.all([
      freePort().then((port) => startLocalMongo({ dataDir, port, log })),
      freePort().then((port) => startLocalTemporal({ dataDir, port, log })),
      Receiver.start(),
    ]);
    stack.client = await MongoClient.connect(stack.mongo.address);
    stack.db = stack.client.db('faults');
    Object.assign(stack.env, {
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      MONGODB_URI: stack.mongo.address,
      MONGODB_DB: 'faults',
      TEMPORAL_ADDRESS: stack.temporal.address,
      TEMPORAL_TASK_QUEUE: `faults-${randomUUID()}`,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALERT_GATHER_MS: '200',
      DECOY_SMTP_PORT: '0',
      WORKER_METRICS_PORT: '0',
      PASSWORD_HASHING_CONCURRENCY: '2',
      TRIPWIRE_JOURNAL_DIR: join(dataDir, 'journal'),
      ...options.env,
    });
    for (const extra of options.apis) {
      const port = await freePort();
      stack.apis.push({
        entry: 'src/main.ts',
        env: { ...extra, PORT: String(port) },
        port,
        proc: null as never,
      });
    }
    stack.worker = { entry: 'src/worker.ts', env: {}, proc: null as never };
    try {
      await Promise.all(stack.apis.map((_, n) => stack.startApi(n)));
      await stack.startWorker();
    } catch (err) {
      // The caller gets no stack to stop: what started is stopped here, so the file fails with
      // this error rather than with its client and servers left behind.
      await stack.stop();
      throw err;
    }
    return stack;
  }

  async stop(): Promise<void> {
    // This file's own client first: it only reads, and the processes' stops below (up to 10 s each
    // before their SIGKILL) must not keep it open past the file's end, where the leak check fails it.
    await this.client?.close();
    await Promise.all([...this.apis.map((a) => a.proc?.stop()), this.worker?.proc?.stop()]);
    await this.receiver?.stop();
    await Promise.all([this.temporal?.stop(), this.mongo?.stop()]);
  }

  spawnNode(entry: string, extra: Record<string, string>): ManagedProcess {
    return spawnManaged(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
      env: { ...process.env, ...this.env, ...extra },
      onLine: (line) => {
        this.logs.push(`${this.linePrefix(entry, extra)}${line}`);
        if (process.env.FAULT_LOGS) console.log(this.logs.at(-1));
      },
    });
  }

  private linePrefix(entry: string, env: Record<string, string>): string {
    return `[${entry} ${env.PORT ?? ''}] `;
  }

  url(n: number, path: string): string {
    return `http://127.0.0.1:${this.apis[n]!.port}${path}`;
  }

  async startApi(n: number): Promise<void> {
    const node = this.apis[n]!;
    node.proc = this.spawnNode(node.entry, node.env);
    await this.untilServing(`API ${n} answers`, node, async () => {
      return (await fetch(this.url(n, '/healthz'))).ok;
    });
  }

  async startWorker(): Promise<void> {
    this.worker.proc = this.spawnNode(this.worker.entry, this.worker.env);
    await this.untilServing('a worker polls', this.worker, async () => {
      return (await fetch(this.url(0, '/readyz'))).ok;
    });
  }

  /**
   * Waits until `serving` says yes; when the child exits first or the wait runs out, fails with
   * the child's last lines, which say why.
   */
  private async untilServing(
    what: string,
    node: ChildNode,
    serving: () => Promise<boolean>,
  ): Promise<void> {
    const { child } = node.proc;
    const gone = () => child.exitCode !== null || child.signalCode !== null;
    const served = await until(what, async () =>
      gone() ? false : (await serving()) || undefined,
    ).catch(() => false);
    if (served) return;
    const prefix = this.linePrefix(node.entry, node.env);
    const lines = this.logs.filter((line) => line.startsWith(prefix)).slice(-20);
    const why = gone() ? `its process exited (${child.exitCode ?? child.signalCode})` : 'timed out';
    throw new Error(`${what}: ${why}; its last lines:\n${lines.join('\n')}`);
  }

  async kill(proc: ManagedProcess, signal: NodeJS.Signals): Promise<void> {
    process.kill(-proc.child.pid!, signal);
    await proc.exited;
  }

  /** The database SIGKILLed: it stays down until `startMongo`. */
  async killMongo(): Promise<void> {
    await this.kill(this.mongo.process, 'SIGKILL');
  }

  /** The database started again on its port, with its data. */
  async startMongo(): Promise<void> {
    const port = Number(new URL(this.mongo.address).port);
    this.mongo = await startLocalMongo({
      dataDir: this.dataDir,
      port,
      log: (line) => this.logs.push(line),
    });
  }

  async startTemporal(): Promise<void> {
    const port = Number(this.temporal.address.split(':')[1]);
    this.temporal = await startLocalTemporal({
      dataDir: this.dataDir,
      port,
      log: (line) => this.logs.push(line),
    });
  }

  async call(n: number, path: string, token: string | null, body?: object) {
    const res = await fetch(this.url(n, path), {
      method: body ? 'POST' : 'GET',
      headers: {
        'content-type': 'application/json',
        ...(token && { authorization: `Bearer ${token}` }),
      },
      body: body && JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Signs up on API `via[0]`, logs in on `via[1]`, and sets the account up through the first. */
  async account(
    name: string,
    canaries: number,
    { alertPath = `/alerts/${name}`, via = [0, 1] } = {},
  ): Promise<FaultAccount> {
    const [first, second] = via as [number, number];
    const email = uniqueEmail();
    const signup = await this.call(first, '/api/auth/signup', null, { email, password: PASSWORD });
    const { token } = (await this.call(second, '/api/auth/login', null, {
      email,
      password: PASSWORD,
    })) as { token: string };
    const hook = (path: string) =>
      this.call(first, '/api/alert-channels', token, {
        kind: 'webhook',
        name: path,
        url: this.receiver.url(path),
        secret: 'fault-suite-webhook-secret',
      });
    await hook(alertPath);
    const tests = (await hook(`/tests/${name}`)).id as string;
    const paths: string[] = [];
    for (let i = 0; i < canaries; i++) {
      const planted = await this.call(first, '/api/canaries', token, {
        kind: 'url',
        memo: `${name} ${i}`,
      });
      paths.push(new URL(planted.value as string).pathname);
    }
    return { accountId: signup.user_id as string, token, alertPath, tests, paths };
  }

  /**
   * Fetches each path on each API at once, as curl would (`x-request-id` a fresh UUID); each
   * request's id and status, or `null` when it got no answer (the process was gone).
   */
  async request(
    paths: string[],
    onApis = [0, 1],
  ): Promise<{ id: string; status: number | null; body: string }[]> {
    return Promise.all(
      paths.flatMap((path) =>
        onApis.map(async (n) => {
          const id: string = randomUUID();
          try {
            const res = await fetch(this.url(n, path), {
              headers: { 'user-agent': 'curl/8.5.0', 'x-request-id': id },
            });
            return { id, status: res.status, body: await res.text() };
          } catch {
            return { id, status: null, body: '' };
          }
        }),
      ),
    );
  }

  /** `request`, keeping the ids of the requests answered 200. */
  async fire(paths: string[], onApis = [0, 1]): Promise<string[]> {
    const answers = await this.request(paths, onApis);
    return answers.filter((a) => a.status === 200).map((a) => a.id);
  }

  /** A channel test run through an API: its delivery id once it answers. */
  async channelTest(n: number, who: { token: string; tests: string }) {
    const answer = await this.call(n, `/api/alert-channels/${who.tests}/test`, who.token, {});
    return { outcome: answer.outcome, deliveryId: answer.deliveryId as string };
  }

  /** The alerts the receiver got on `path`: each one's delivery id and threat event id. */
  deliveryIdsOf(path: string): { deliveryId: string; threatEventId: string }[] {
    return this.receiver.hitsOn(path).map((h) => ({
      deliveryId: String(h.headers[DELIVERY_ID_HEADER.toLowerCase()]),
      threatEventId: (JSON.parse(h.rawBody.toString()) as { data: { threatEventId: string } }).data
        .threatEventId,
    }));
  }
}
