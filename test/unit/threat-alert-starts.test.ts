import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import pino from 'pino';
import { MAX_STARTS_IN_FLIGHT, ThreatAlertStarts } from '../../src/alerts/threat-alert-starts';
import type { ThreatsRepository } from '../../src/canaries/threats.repository';
import type { Temporal } from '../../src/temporal/client';

/**
 * A Temporal client whose start calls wait until the test answers them: what the queue sends,
 * how many at once, and in what order.
 */
function fakeTemporal() {
  const calls: { event: string; answer: (outcome?: 'started' | 'ran' | 'down') => void }[] = [];
  let out = 0;
  let mostOut = 0;
  const start = async (_type: string, options: { workflowId: string }) => {
    out++;
    mostOut = Math.max(mostOut, out);
    const outcome = await new Promise<string>((resolve) =>
      calls.push({
        event: options.workflowId,
        answer: (o = 'started') => resolve(o),
      }),
    );
    out--;
    if (outcome === 'ran') {
      throw new WorkflowExecutionAlreadyStartedError('started', options.workflowId, '');
    }
    if (outcome === 'down') throw new Error('14 UNAVAILABLE');
  };
  const temporal = {
    client: {
      withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
      workflow: { start },
    },
    taskQueue: 'test',
    alertRecoveryMs: [],
  } as unknown as Temporal;
  return { temporal, calls, mostOut: () => mostOut };
}

function queue() {
  const fake = fakeTemporal();
  const cleared: string[][] = [];
  const clearedFollowUps: string[][] = [];
  const threats = {
    alertsStarted: (ids: string[]) => {
      cleared.push(ids);
      return Promise.resolve();
    },
    followUpsStarted: (ids: string[]) => {
      clearedFollowUps.push(ids);
      return Promise.resolve();
    },
  } as unknown as ThreatsRepository;
  const starts = new ThreatAlertStarts({
    temporal: fake.temporal,
    threats,
    log: pino({ level: 'silent' }),
  });
  const start = (event: string, opened = true) =>
    starts.start({ accountId: 'usr_1', threatEventId: event }, opened);
  /** Answers every call out, in the order they were sent, and lets the queue go on. */
  const answerAll = async (outcome?: 'started' | 'ran' | 'down') => {
    for (let answered = 0; answered < fake.calls.length; answered++) {
      fake.calls[answered]!.answer(outcome);
      await new Promise((next) => setImmediate(next));
    }
  };
  const events = () => fake.calls.map((c) => c.event.replace(/^alert-/, ''));
  return { ...fake, starts, start, answerAll, cleared, clearedFollowUps, events };
}

describe('threat alert starts', () => {
  it('when 80 storms open at once, then at most MAX_STARTS_IN_FLIGHT calls are out at a time, in the order asked, and every alert is started once, its pending mark cleared', async () => {
    const q = queue();
    for (let i = 0; i < 80; i++) q.start(`thr_${i}`);
    expect(q.calls).toHaveLength(MAX_STARTS_IN_FLIGHT);
    await q.answerAll();
    await q.starts.idle();
    expect(q.mostOut()).toBe(MAX_STARTS_IN_FLIGHT);
    expect(q.events()).toEqual(Array.from({ length: 80 }, (_, i) => `thr_${i}`));
    expect(q.cleared.flat().sort()).toEqual(q.events().sort());
  });

  it('when an event is asked for again while it waits, then it is started once, and its mark cleared if either ask opened it', async () => {
    const q = queue();
    for (let i = 0; i < MAX_STARTS_IN_FLIGHT; i++) q.start(`thr_busy_${i}`, false);
    q.start('thr_twice', false);
    q.start('thr_twice', true);
    await q.answerAll();
    await q.starts.idle();
    expect(q.events().filter((e) => e === 'thr_twice')).toHaveLength(1);
    expect(q.cleared.flat()).toEqual(['thr_twice']);
  });

  it('when the alert had been started already, then its mark is cleared; when Temporal is down, then the mark stays for the reconciler', async () => {
    const q = queue();
    q.start('thr_ran');
    await q.answerAll('ran');
    q.start('thr_down');
    await q.answerAll('down');
    await q.starts.idle();
    expect(q.events()).toEqual(['thr_ran', 'thr_down']);
    expect(q.cleared.flat()).toEqual(['thr_ran']);
  });

  it("when a storm's follow-up is asked for twice beside its alert while they wait, then each is started once and clears its own mark", async () => {
    const q = queue();
    for (let i = 0; i < MAX_STARTS_IN_FLIGHT; i++) q.start(`thr_busy_${i}`, false);
    const followUp = {
      accountId: 'usr_1',
      threatEventId: 'thr_storm',
      gather: { quietMs: 1, maxMs: 1 },
    };
    q.start('thr_storm', false);
    q.starts.followUp(followUp);
    q.starts.followUp(followUp);
    await q.answerAll();
    await q.starts.idle();
    expect(q.calls.map((c) => c.event).filter((e) => e.endsWith('thr_storm'))).toEqual([
      'alert-thr_storm',
      'follow-up-thr_storm',
    ]);
    expect({ alerts: q.cleared.flat(), followUps: q.clearedFollowUps.flat() }).toEqual({
      alerts: [],
      followUps: ['thr_storm'],
    });
  });
});
