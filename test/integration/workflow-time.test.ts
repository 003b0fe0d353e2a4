import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ensureTemporalTestServer } from '../../tools/dev-tools';
import { temporal } from '@temporalio/proto';
import type { Activities } from '../../activities';
import { loadConfig } from '../../src/config';
import {
  ALERT_NOT_DELIVERED,
  AGENT_SIGNALS,
  SEARCH_ATTRIBUTE_NAMES,
  type AgentWatchInput,
  type AlertInput,
  type AlertPayloadJson,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
  type FirstAttempts,
  type ThreatFirstAttempts,
  followUpIdOf,
} from '../../workflows/shared';
import { tripwirePayload } from '../support/alerts';
import { workflowBundle } from '../support/test-worker';

// The workflows' timers in skipped time, on Temporal's time-skipping test server: storms gathered
// for minutes, an agent silent for an hour, retry pauses, each in well under a second. The
// activities are stand-ins that record what the workflow asked for; what they do for real is
// tested against the real servers in the other integration files.

jest.setTimeout(60_000);

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const TARGETS: DeliveryTarget[] = [{ channelId: 'chn_hook', kind: 'webhook', name: 'hook' }];

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  const path = await ensureTemporalTestServer(() => undefined);
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
  });
  // The test server answers no listing, and takes the registration as the dev server does.
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTE_NAMES.map((name) => [
        name,
        temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
});
afterAll(() => env?.teardown());

/** What the workflows asked of the stand-in activities. */
function standIns({ verdict = 'delivered' }: { verdict?: AttemptReport['verdict'] } = {}) {
  const asked = {
    followUps: [] as { hits: number; newHits: number }[],
    attempts: [] as number[],
    recordedAttempts: [] as number[],
    agentAlerts: [] as string[],
  };
  /** The storm's event, as the test's hits grow it: opened by one, which the first alert reported. */
  const storm = { hits: 1, roundOver: true };
  const payload = (threatEventId: string | null): AlertPayloadJson =>
    tripwirePayload(threatEventId ?? 'thr_none');
  const report = (attempt: number): AttemptReport => {
    asked.attempts.push(attempt);
    return {
      attempt,
      at: new Date().toISOString(),
      durationMs: 1,
      verdict,
      status: verdict === 'delivered' ? 204 : 503,
      error: verdict === 'delivered' ? null : 'HTTP 503',
      answer: null,
    };
  };
  // The first step sends to every target and records what it can, as the real one does.
  const firstAttempts = (): FirstAttempts => {
    const first = report(1);
    if (first.verdict === 'retry') asked.recordedAttempts.push(1);
    return {
      targets: TARGETS,
      reports: { [TARGETS[0]!.channelId]: first },
      recorded: first.verdict === 'retry' ? 'attempts' : 'outcomes',
    };
  };
  // Synchronous stand-ins: the worker awaits whatever an activity returns.
  const activities: Partial<Record<keyof Activities, (input: never) => unknown>> = {
    sendThreatAlert: ({ threatEventId }: { threatEventId: string }): ThreatFirstAttempts => ({
      ...firstAttempts(),
      payload: payload(threatEventId),
      hits: 1,
      sealed: true,
    }),
    stormHits: () => ({ hits: storm.hits, reported: storm.roundOver ? 1 : null }),
    sendFirstAttempts: firstAttempts,
    prepareStormFollowUp: (input: { threatEventId: string; hits: number; newHits: number }) => {
      asked.followUps.push({ hits: input.hits, newHits: input.newHits });
      return payload(input.threatEventId);
    },
    listDeliveryTargets: () => TARGETS,
    sendAlertAttempt: ({ attempt }: { attempt: number }): AttemptReport => report(attempt),
    recordDeliveryAttempt: ({ report }: { report: AttemptReport }) => {
      asked.recordedAttempts.push(report.attempt);
    },
    recordAlertOutcomes: () => undefined,
    raiseAgentAlert: ({ threatEventId }: { threatEventId: string }) => {
      asked.agentAlerts.push(threatEventId);
      return payload(threatEventId);
    },
  };
  return { asked, activities, storm };
}

async function withWorker<T>(
  activities: object,
  run: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `time-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
  });
  return worker.runUntil(run(taskQueue));
}

/** How long the execution ran, in the server's (skipped) time. */
async function ranFor(handle: WorkflowHandle): Promise<number> {
  const { startTime, closeTime } = await handle.describe();
  return closeTime!.getTime() - startTime.getTime();
}

const GATHER = { quietMs: MINUTE, maxMs: 30 * MINUTE };

describe('a storm in skipped time', () => {
  const threatEventId = () => `thr_${randomUUID()}`;
  /** A storm's follow-up, as the API starts it at the storm's first later hit. */
  const startFollowUp = (taskQueue: string, gather = GATHER) => {
    const id = threatEventId();
    return env.client.workflow.start('alertWorkflow', {
      taskQueue,
      workflowId: followUpIdOf(id),
      args: [
        {
          kind: 'follow-up',
          accountId: 'usr_time',
          threatEventId: id,
          gather,
          recoveryMs: [],
        } satisfies AlertInput,
      ],
    });
  };

  it("when a threat alert's first attempts land, then it ends with that round: no timer, one workflow task", async () => {
    const { asked, activities } = standIns();
    const { ran, history } = await withWorker(activities, async (taskQueue) => {
      const id = threatEventId();
      const handle = await env.client.workflow.start('alertWorkflow', {
        taskQueue,
        workflowId: `alert-${id}`,
        args: [
          {
            kind: 'threat',
            accountId: 'usr_time',
            threatEventId: id,
            canaryId: 'cnr_time',
            recoveryMs: [],
          } satisfies AlertInput,
        ],
      });
      const { results } = await handle.result();
      expect(results.map((r: ChannelResult) => r.outcome)).toEqual(['delivered']);
      return { ran: await ranFor(handle), history: await handle.fetchHistory() };
    });
    expect(ran).toBeLessThan(10 * SECOND);
    expect(history.events!.some((e) => e.timerStartedEventAttributes)).toBe(false);
    expect(history.events!.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    expect(asked.followUps).toEqual([]);
  });

  it('when hits keep coming within the quiet period, then one follow-up sums them up once a minute passes without one', async () => {
    const { asked, activities, storm } = standIns();
    const ran = await withWorker(activities, async (taskQueue) => {
      const handle = await startFollowUp(taskQueue);
      // Hits at 20 s, 50 s, 80 s and 110 s (clear of the quiet periods' ends, read each minute).
      await env.sleep(20 * SECOND);
      for (let i = 0; i < 4; i++) {
        storm.hits += 2;
        await env.sleep(30 * SECOND);
      }
      const { results } = await handle.result();
      expect(
        results.map((r: ChannelResult) => [r.deliveryId.startsWith('follow-up-'), r.outcome]),
      ).toEqual([[true, 'delivered']]);
      return ranFor(handle);
    });
    // A local activity runs at least once (a workflow task that skipped time overtook runs it again):
    // the last run is the one the alert recorded.
    expect(asked.followUps.at(-1)).toEqual({ hits: 9, newHits: 8 });
    // The last hit before 2 min, then a quiet minute: the storm was read at 1, 2 and 3 min.
    expect(ran).toBeGreaterThanOrEqual(3 * MINUTE);
    expect(ran).toBeLessThan(3 * MINUTE + 10 * SECOND);
  });

  it('when hits never stop, then the follow-up goes out when the gathering time is up, counting the hits until then', async () => {
    const { asked, activities, storm } = standIns();
    const { ran, results } = await withWorker(activities, async (taskQueue) => {
      const handle = await startFollowUp(taskQueue, { quietMs: MINUTE, maxMs: 10 * MINUTE });
      // A hit every 30 s from 20 s on, for 12.5 minutes.
      await env.sleep(20 * SECOND);
      for (let i = 0; i < 25; i++) {
        storm.hits++;
        await env.sleep(30 * SECOND);
      }
      const { results } = await handle.result();
      return { ran: await ranFor(handle), results: results as ChannelResult[] };
    });
    expect(ran).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(ran).toBeLessThan(11 * MINUTE);
    // The 20 hits before 10 min joined the follow-up; the later ones stay on the event.
    expect(results).toHaveLength(1);
    expect(asked.followUps.at(-1)).toEqual({ hits: 21, newHits: 20 });
  });

  it("when the first alert's round is still going when the storm is quiet, then the follow-up waits for it", async () => {
    const { asked, activities, storm } = standIns();
    storm.roundOver = false;
    const ran = await withWorker(activities, async (taskQueue) => {
      const handle = await startFollowUp(taskQueue, { quietMs: MINUTE, maxMs: 5 * MINUTE });
      // One later hit at 10 s; the first alert's retries end at 7 min.
      await env.sleep(10 * SECOND);
      storm.hits++;
      await env.sleep(7 * MINUTE - 10 * SECOND);
      storm.roundOver = true;
      await handle.result();
      return ranFor(handle);
    });
    expect(ran).toBeGreaterThanOrEqual(7 * MINUTE);
    expect(ran).toBeLessThan(7 * MINUTE + 10 * SECOND);
    expect(asked.followUps.at(-1)).toEqual({ hits: 2, newHits: 1 });
  });

  it('when no hit came after those the first alert reported, then the follow-up sends nothing', async () => {
    const { asked, activities } = standIns();
    const results = await withWorker(activities, async (taskQueue) => {
      const handle = await startFollowUp(taskQueue);
      return ((await handle.result()) as { results: ChannelResult[] }).results;
    });
    expect(results).toEqual([]);
    expect(asked.followUps).toEqual([]);
  });
});

describe('retries in skipped time', () => {
  it('when a receiver answers 503 every time, then three attempts go out 1 s and 2 s apart, the first two recorded on their own', async () => {
    const { asked, activities } = standIns({ verdict: 'retry' });
    const ran = await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('alertWorkflow', {
        taskQueue,
        workflowId: `channel-test-${randomUUID()}`,
        args: [
          {
            kind: 'test',
            accountId: 'usr_time',
            payload: tripwirePayload('thr_retry'),
            channelId: 'chn_hook',
          } satisfies AlertInput,
        ],
      });
      const { results } = await handle.result();
      expect(results).toEqual([
        expect.objectContaining({ outcome: 'failed', status: 503, error: 'HTTP 503' }),
      ]);
      return ranFor(handle);
    });
    expect(asked.attempts).toEqual([1, 2, 3]);
    expect(asked.recordedAttempts).toEqual([1, 2]);
    expect(ran).toBeGreaterThanOrEqual(3 * SECOND);
    expect(ran).toBeLessThan(4 * SECOND);
  });
});

describe('recovery in skipped time', () => {
  it('when a receiver stays down, then the default schedule re-delivers six times over about 35 h and the alert fails naming the error', async () => {
    const { asked, activities } = standIns({ verdict: 'retry' });
    const schedule = loadConfig({ MONGODB_URI: 'mongodb://127.0.0.1/' }).ALERT_RECOVERY_SCHEDULE;
    const { ran, failure } = await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('alertWorkflow', {
        taskQueue,
        workflowId: `alert-${randomUUID()}`,
        args: [
          {
            kind: 'ready',
            accountId: 'usr_time',
            payload: tripwirePayload('thr_recovery'),
            recoveryMs: schedule,
          } satisfies AlertInput,
        ],
      });
      const failure = await handle.result().then(
        () => null,
        (err: unknown) => err,
      );
      return { ran: await ranFor(handle), failure };
    });
    expect(schedule).toHaveLength(6);
    // Seven deliveries of three attempts, numbered on under the one delivery id.
    expect(asked.attempts).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe(
      ALERT_NOT_DELIVERED,
    );
    const waited = schedule.reduce((a, b) => a + b, 0); // 34 h 36 min
    expect(ran).toBeGreaterThanOrEqual(waited + 7 * 3 * SECOND);
    // Every pause at most a quarter longer (jitter).
    expect(ran).toBeLessThan(1.25 * (waited + 7 * 4 * SECOND));
  });
});

describe('an agent watch in skipped time', () => {
  it('when an hourly agent beats once and then goes silent for hours, then exactly one alert, an hour after its last beat', async () => {
    const { asked, activities } = standIns();
    await withWorker(activities, async (taskQueue) => {
      const handle = await env.client.workflow.start('agentWatchWorkflow', {
        taskQueue,
        workflowId: `agent-watch-${randomUUID()}`,
        args: [
          {
            accountId: 'usr_time',
            agentId: 'agt_time',
            intervalMs: 60 * MINUTE,
            recoveryMs: [],
          } satisfies AgentWatchInput,
        ],
      });
      await env.sleep(50 * MINUTE);
      await handle.signal(AGENT_SIGNALS.heartbeat);
      await env.sleep(55 * MINUTE);
      expect(asked.agentAlerts).toEqual([]);
      await env.sleep(10 * MINUTE);
      expect(asked.agentAlerts).toHaveLength(1);
      await env.sleep(5 * 60 * MINUTE);
      expect(asked.agentAlerts).toHaveLength(1);
      await handle.signal(AGENT_SIGNALS.retire);
      await handle.result();
    });
    // The alert ran as a child workflow, through the same delivery as any alert.
    expect(asked.attempts).toEqual([1]);
  });
});
