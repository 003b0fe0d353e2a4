/**
 * Fault suite, real processes: two APIs and a worker run as child processes (`node --import tsx
 * src/main.ts` / `src/worker.ts`, as `npm run dev` starts them) on a database and a Temporal dev
 * server of this file's own. Each case kills one of them (SIGKILL or SIGTERM) and starts it again
 * while URL tripwires are fetched on both APIs and channel tests run, then checks that every
 * answered hit is recorded and sealed, every threat event alerted exactly once on its channel
 * (by delivery id at the receiver, plus at most one storm follow-up) and every delivery outcome
 * true. Prints Fault | Fired | Lost.
 */
import { ProcessStack, sleep, until } from '../support/process-stack';

const table = ['| Fault | Fired | Lost |', '|---|---|---|'];
let stack: ProcessStack;

/**
 * What was lost: answered hits not recorded and sealed, threat events without exactly one first
 * alert at the receiver (by delivery id; a storm's follow-up is the one other id allowed),
 * recorded outcomes that contradict what the receiver saw.
 */
async function lostOf(who: { accountId: string; alertPath: string }, answered: string[]) {
  const hits = await until('every answered hit recorded', async () => {
    const found = await stack.db
      .collection('threat_hits')
      .find({ requestId: { $in: answered } })
      .toArray();
    return found.length === answered.length ? found : undefined;
  });
  let lost = answered.length - hits.length;
  for (const hit of hits) {
    const sealed = await stack.db.collection('evidence').findOne({ _id: hit.evidence.logId });
    if (!sealed || sealed.contentHash !== hit.evidence.contentHash) lost++;
  }
  const events = await stack.db
    .collection('threat_events')
    .find({ accountId: who.accountId })
    .toArray();
  const delivered = await until('every threat event delivered', () => {
    const seen = new Set(stack.deliveryIdsOf(who.alertPath).map((d) => d.threatEventId));
    return events.every((e) => seen.has(String(e._id)))
      ? stack.deliveryIdsOf(who.alertPath)
      : undefined;
  });
  for (const event of events) {
    const ids = new Set(
      delivered.filter((d) => d.threatEventId === String(event._id)).map((d) => d.deliveryId),
    );
    // Leading-edge alerting: one alert at the first hit, and at most one follow-up for the rest.
    const followUps = [...ids].filter((id) => id.startsWith('follow-up-'));
    if (ids.size - followUps.length !== 1 || followUps.length > 1) lost++;
    for (const deliveryId of ids) {
      const record = await until('the delivery outcome recorded', async () => {
        const doc = await stack.db
          .collection('alert_deliveries')
          .findOne({ _id: deliveryId as never });
        return doc?.outcome ? doc : undefined;
      });
      if (record.outcome !== 'delivered') lost++;
    }
  }
  return { lost, events: events.length };
}

beforeAll(async () => {
  // Both APIs share one journal directory: each writes segments of its own.
  stack = await ProcessStack.start('processes', { apis: [{}, {}] });
}, 180_000);

afterAll(async () => {
  console.log(table.join('\n'));
  await stack?.stop();
}, 60_000);

jest.setTimeout(150_000);

describe('real processes killed and started again', () => {
  it('when an API is SIGKILLed right after answering hits, then its journal replays every one on restart', async () => {
    const who = await stack.account('api-sigkill', 10);
    const answered = await stack.fire([...who.paths, ...who.paths, ...who.paths], [0]);
    await stack.kill(stack.apis[0]!.proc, 'SIGKILL');
    const inDatabase = await stack.db
      .collection('threat_hits')
      .countDocuments({ requestId: { $in: answered } });
    const test = stack.channelTest(1, who);
    await stack.startApi(0);
    const { lost } = await lostOf(who, answered);
    const tested = await test;
    table.push(
      `| API SIGKILLed right after answering ${answered.length} hits (${answered.length - inDatabase} not yet in the database), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost, tested.outcome]).toEqual([30, 0, 'delivered']);
  });

  it('when an API is SIGTERMed while hits fire, then every answered hit is recorded', async () => {
    const who = await stack.account('api-sigterm', 5);
    const firing = stack.fire([...who.paths, ...who.paths], [1]);
    await sleep(20);
    await stack.kill(stack.apis[1]!.proc, 'SIGTERM');
    const answered = [...(await firing), ...(await stack.fire(who.paths, [0]))];
    await stack.startApi(1);
    const { lost } = await lostOf(who, answered);
    table.push(
      `| API SIGTERMed while 10 hits fire, then restarted | ${answered.length} answered | ${lost} |`,
    );
    expect(lost).toBe(0);
  });

  it('when the database is SIGKILLed while hits fire, then they are answered and recorded once it is back', async () => {
    const who = await stack.account('database', 5);
    await stack.killMongo();
    const answered = await stack.fire(who.paths);
    await stack.startMongo();
    const { lost } = await lostOf(who, answered);
    table.push(
      `| the database SIGKILLed while ${answered.length} hits fire, then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost]).toEqual([10, 0]);
  });

  it('when Temporal is SIGKILLed while hits fire, then every threat event is alerted once it is back', async () => {
    const who = await stack.account('temporal', 5);
    await stack.kill(stack.temporal.process, 'SIGKILL');
    const answered = await stack.fire(who.paths);
    await stack.startTemporal();
    const { lost, events } = await lostOf(who, answered);
    table.push(
      `| Temporal SIGKILLed while ${answered.length} hits fire (${events} events), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost]).toEqual([10, 0]);
  });

  it('when the worker is SIGKILLed mid-delivery, then each event still reaches the receiver once', async () => {
    const who = await stack.account('worker', 3, { alertPath: '/delay/3000/worker-sigkill' });
    const answered = await stack.fire(who.paths);
    await until('a delivery in flight', () =>
      stack.receiver.hitsOn(who.alertPath).length ? true : undefined,
    );
    await stack.kill(stack.worker.proc, 'SIGKILL');
    await stack.startWorker();
    const test = await stack.channelTest(0, who);
    const { lost, events } = await lostOf(who, answered);
    table.push(
      `| worker SIGKILLed mid-delivery (${events} events), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([lost, test.outcome]).toEqual([0, 'delivered']);
  });
});
