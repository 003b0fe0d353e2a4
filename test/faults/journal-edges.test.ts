/**
 * Fault suite, the edges of the hit journal, with real processes: two APIs and a worker as child
 * processes on a database and Temporal of this file's own. API 0 keeps its journal on a 64 KiB
 * tmpfs (mounted here: the suite runs as root) that a filler file fills; API 1 on ordinary disk.
 * Each case counts, per answered hit: Lost (answered 200 and never recorded and sealed, or an
 * event never alerted), Duplicates (a hit recorded twice, a second event for one canary, source
 * and storm window, an event without hits, a second first alert) and Crashes (an API that exited
 * on its own). Prints the table that docs/operations.md carries.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProcessStack, sleep, type FaultAccount } from '../support/process-stack';

const STORM_WINDOW_SECONDS = 3600;
const table = [
  '| Case | Fired | Answered 200 | Answered 503 | Lost | Duplicates | Crashes |',
  '|---|---|---|---|---|---|---|',
];
let stack: ProcessStack;
let small: string;
let filler: string;
let mounted = false;

/** The API's process has exited without being told to. */
const crashed = (n: number) => {
  const { child } = stack.apis[n]!.proc;
  return child.exitCode !== null || child.signalCode !== null;
};

/** Fills the small file system but for `bytes` (a page is 4 KiB); `null` gives the space back. */
async function leaveFree(bytes: number | null): Promise<void> {
  await rm(filler, { force: true });
  if (bytes === null) return;
  const { bavail, bsize } = await statfs(small);
  await writeFile(filler, Buffer.alloc(Math.max(0, bavail * bsize - bytes)));
}

/** The answered hits recorded by `ms` from now (or all of them sooner). */
async function recordedOf(requestIds: string[], ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const hits = await stack.db
      .collection('threat_hits')
      .find({ requestId: { $in: requestIds } })
      .toArray();
    if (
      new Set(hits.map((h) => String(h.requestId))).size === requestIds.length ||
      Date.now() > deadline
    )
      return hits;
    await sleep(500);
  }
}

/**
 * Lost and Duplicates for one account's answered hits: every answered hit recorded once and
 * sealed, every event with its hits, one event per canary and storm window (source is the same
 * for every hit here), each alerted exactly once (a storm's follow-up aside).
 */
async function countOf(who: FaultAccount, answered: string[]) {
  const hits = await recordedOf(answered);
  const recordedIds = new Set(hits.map((h) => String(h.requestId)));
  let lost = answered.filter((id) => !recordedIds.has(id)).length;
  let duplicates = hits.length - recordedIds.size;
  for (const hit of hits) {
    const sealed = await stack.db.collection('evidence').findOne({ _id: hit.evidence.logId });
    if (!sealed || sealed.contentHash !== hit.evidence.contentHash) lost++;
  }
  const events = await stack.db
    .collection<{ canaryId: string; firstHitAt: Date }>('threat_events')
    .find({ accountId: who.accountId })
    .toArray();
  const windowOf = (e: { canaryId: string; firstHitAt: Date }) =>
    `${e.canaryId}|${Math.floor(e.firstHitAt.getTime() / (STORM_WINDOW_SECONDS * 1000))}`;
  const ghosts = events.filter((e) => !hits.some((h) => h.threatEventId === String(e._id)));
  duplicates += events.length - new Set(events.map(windowOf)).size;
  // An event whose hits are lost is counted there already; one never given hits is a ghost.
  duplicates += ghosts.filter(
    (g) => events.filter((e) => windowOf(e) === windowOf(g)).length === 1,
  ).length;
  const deadline = Date.now() + 60_000;
  const firstAlerts = () =>
    stack.deliveryIdsOf(who.alertPath).filter((d) => !d.deliveryId.startsWith('follow-up-'));
  while (
    Date.now() < deadline &&
    !events.every((e) => firstAlerts().some((d) => d.threatEventId === String(e._id)))
  ) {
    await sleep(250);
  }
  await sleep(1_000); // a second alert, if any, comes as soon as the first
  const alertsByWindow = new Map<string, Set<string>>();
  for (const alert of firstAlerts()) {
    const event = events.find((e) => String(e._id) === alert.threatEventId);
    const key = event ? windowOf(event) : alert.threatEventId;
    alertsByWindow.set(key, (alertsByWindow.get(key) ?? new Set()).add(alert.deliveryId));
  }
  for (const key of new Set(events.map(windowOf))) {
    const alerts = alertsByWindow.get(key)?.size ?? 0;
    if (alerts === 0) lost++;
    else duplicates += alerts - 1;
  }
  return { lost, duplicates, ghosts: ghosts.length, events: events.length };
}

beforeAll(async () => {
  stack = await ProcessStack.start('journal-edges', {
    apis: [{ TRIPWIRE_JOURNAL_DIR: '' }, {}],
    env: { STORM_WINDOW_SECONDS: String(STORM_WINDOW_SECONDS) },
    // API 0's journal is set below, once the small file system is mounted.
    beforeApis: async (dataDir, apis) => {
      small = join(dataDir, 'small');
      await mkdir(small);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small]);
      mounted = true;
      filler = join(small, 'filler');
      apis[0]!.TRIPWIRE_JOURNAL_DIR = join(small, 'journal');
    },
  });
}, 180_000);

afterAll(async () => {
  console.log(table.join('\n'));
  await stack?.stop();
  if (mounted) execFileSync('umount', [small]);
}, 60_000);

jest.setTimeout(240_000);

describe('the journal disk fills up', () => {
  it.each([
    [25, 'up'],
    [40, 'up'],
    [25, 'down'],
    [40, 'down'],
  ] as const)(
    'when %i hits come at once on a full journal disk with the database %s, then none is answered 200 unwritten, the API keeps serving, and hits are taken again once space returns',
    async (count, database) => {
      const who = await stack.account(`full-${count}-${database}`, 5, { via: [1, 1] });
      const paths = Array.from({ length: count }, (_, i) => who.paths[i % who.paths.length]!);
      await leaveFree(4096);
      if (database === 'down') await stack.killMongo();
      const full = await stack.request(paths, [0]);
      await sleep(1_000); // an API that is going down has gone by then
      const refused = full.filter((a) => a.status === 503);
      // Other routes keep working: a liveness check, and (database up) a signed-in read.
      const statusOf = (path: string, token?: string) =>
        fetch(stack.url(0, path), {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        }).then(
          (res) => res.status,
          () => 0,
        );
      const health = await statusOf('/healthz');
      const signedIn = database === 'up' ? await statusOf('/api/users/me', who.token) : 200;
      let crashes = crashed(0) ? 1 : 0;
      await leaveFree(null);
      if (database === 'down') await stack.startMongo();
      // An API that exited is started again (it needs the database to start) to count the rest.
      if (crashes) await stack.startApi(0);
      const again = await stack.request(paths, [0]);
      if (crashed(0)) crashes++;
      const answered = [...full, ...again].filter((a) => a.status === 200).map((a) => a.id);
      const { lost, duplicates } = await countOf(who, answered);
      table.push(
        `| journal disk full, database ${database}, ${count} concurrent hits; then space given back and ${count} more | ${count * 2} | ${answered.length} | ${refused.length} | ${lost} | ${duplicates} | ${crashes} |`,
      );
      expect({ lost, duplicates, crashes, health, signedIn }).toEqual({
        lost: 0,
        duplicates: 0,
        crashes: 0,
        health: 200,
        signedIn: 200,
      });
      // Every hit is either answered 200 (written) or refused 503 naming the journal.
      expect(full.every((a) => a.status === 200 || a.status === 503)).toBe(true);
      for (const answer of refused) expect(answer.body).toMatch(/journal/);
      expect(again.map((a) => a.status)).toEqual(paths.map(() => 200));
    },
  );
});

describe('an API SIGKILLed right after answering', () => {
  it('when an API is SIGKILLed right after answering 60 hits, 5 runs, then every hit is recorded once, in one event per storm, alerted once', async () => {
    const totals = { answered: 0, lost: 0, duplicates: 0, ghosts: 0, crashes: 0 };
    for (let run = 0; run < 5; run++) {
      const who = await stack.account(`sigkill-${run}`, 6, { via: [0, 0] });
      const paths = Array.from({ length: 60 }, (_, i) => who.paths[i % who.paths.length]!);
      const answered = await stack.fire(paths, [1]);
      await stack.kill(stack.apis[1]!.proc, 'SIGKILL');
      await stack.startApi(1);
      const { lost, duplicates, ghosts } = await countOf(who, answered);
      totals.answered += answered.length;
      totals.lost += lost;
      totals.duplicates += duplicates;
      totals.ghosts += ghosts;
    }
    table.push(
      `| API SIGKILLed right after answering 60 hits on 6 canaries, then restarted; 5 runs (${totals.ghosts} events without hits) | 300 | ${totals.answered} | 0 | ${totals.lost} | ${totals.duplicates} | ${totals.crashes} |`,
    );
    expect(totals).toEqual({ answered: 300, lost: 0, duplicates: 0, ghosts: 0, crashes: 0 });
  });
});

describe('two replicas at the same instant', () => {
  it('when the same canary is hit on both APIs at the same instant, 20 trials, then each trial makes one event and one alert', async () => {
    // A free plan plants 10 canaries a month: two accounts of 10.
    const counts = { lost: 0, duplicates: 0, events: 0 };
    const answered: string[] = [];
    for (const name of ['replicas-a', 'replicas-b']) {
      const who = await stack.account(name, 10);
      const fired: string[] = [];
      for (const path of who.paths) fired.push(...(await stack.fire([path], [0, 1])));
      const count = await countOf(who, fired);
      answered.push(...fired);
      counts.lost += count.lost;
      counts.duplicates += count.duplicates;
      counts.events += count.events;
    }
    const { lost, duplicates, events } = counts;
    const crashes = [0, 1].filter(crashed).length;
    table.push(
      `| the same canary hit on both APIs at the same instant; 20 trials (${events} events) | 40 | ${answered.length} | 0 | ${lost} | ${duplicates} | ${crashes} |`,
    );
    expect({ answered: answered.length, lost, duplicates, events, crashes }).toEqual({
      answered: 40,
      lost: 0,
      duplicates: 0,
      events: 20,
      crashes: 0,
    });
  });
});
