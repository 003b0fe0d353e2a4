import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import pino from 'pino';
import { MAX_SIGNALS_IN_FLIGHT, ThreatAlertSignals } from '../../src/alerts/threat-alert-signals';
import type { ThreatsRepository } from '../../src/canaries/threats.repository';
import type { Temporal } from '../../src/temporal/client';

const gather = { quietMs: 2_000, maxMs: 30_000 };

/**
 * A Temporal client whose signal-with-start calls wait until the test answers them: what the
 * queue sends, how many at once, and in what order.
 */
function fakeTemporal() {
  const calls: { event: string; hits: number; answer: (running?: boolean) => void }[] = [];
  let out = 0;
  let mostOut = 0;
  const signalWithStart = async (
    _type: string,
    options: { workflowId: string; signalArgs: [number] },
  ) => {
    out++;
    mostOut = Math.max(mostOut, out);
    const running = await new Promise<boolean>((resolve) =>
      calls.push({
        event: options.workflowId.replace(/^alert-/, ''),
        hits: options.signalArgs[0],
        answer: (r = true) => resolve(r),
      }),
    );
    out--;
    if (!running) throw new WorkflowExecutionAlreadyStartedError('ended', options.workflowId, '');
  };
  const temporal = {
    client: {
      withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
      workflow: { signalWithStart },
    },
    taskQueue: 'test',
    alertRecoveryMs: [],
  } as unknown as Temporal;
  return { temporal, calls, mostOut: () => mostOut };
}

function queue() {
  const fake = fakeTemporal();
  const started: string[][] = [];
  const threats = {
    alertsStarted: (ids: string[]) => {
      started.push(ids);
      return Promise.resolve();
    },
  } as unknown as ThreatsRepository;
  const signals = new ThreatAlertSignals({
    temporal: fake.temporal,
    threats,
    log: pino({ level: 'silent' }),
  });
  const tell = (event: string, hits = 1, opened = false) =>
    signals.signal({ accountId: 'usr_1', threatEventId: event, gather }, hits, opened);
  /** Answers every call out, in the order they were sent, and lets the queue go on. */
  const answerAll = async (running = true) => {
    for (let answered = 0; answered < fake.calls.length; answered++) {
      const call = fake.calls[answered]!;
      call.answer(running);
      await jest.advanceTimersByTimeAsync(0);
    }
  };
  return { ...fake, signals, tell, answerAll, started };
}

describe('threat alert signals', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when 80 storms open at once, then at most MAX_SIGNALS_IN_FLIGHT calls are out at a time and every alert is started once, its pending mark cleared', async () => {
    const q = queue();
    for (let i = 0; i < 80; i++) q.tell(`thr_${i}`, 1, true);
    await jest.advanceTimersByTimeAsync(0);
    expect(q.calls).toHaveLength(MAX_SIGNALS_IN_FLIGHT);
    await q.answerAll();
    expect(q.mostOut()).toBe(MAX_SIGNALS_IN_FLIGHT);
    expect(q.calls.map((c) => c.event).sort()).toEqual(
      Array.from({ length: 80 }, (_, i) => `thr_${i}`).sort(),
    );
    await q.signals.idle();
    expect(q.started.flat().sort()).toEqual(q.calls.map((c) => c.event).sort());
  });

  it('when hits keep coming after the start, then the alert is told of them at most every half quiet period, added up', async () => {
    const q = queue();
    q.tell('thr_a');
    await jest.advanceTimersByTimeAsync(0);
    await q.answerAll();
    for (let i = 0; i < 9; i++) {
      q.tell('thr_a');
      await jest.advanceTimersByTimeAsync(100);
    }
    expect(q.calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(gather.quietMs / 2 - 900);
    expect(q.calls.map((c) => c.hits)).toEqual([1, 9]);
  });

  it('when a new storm waits for a slot beside alerts due to be told more, then the new one goes first', async () => {
    const q = queue();
    for (let i = 0; i < MAX_SIGNALS_IN_FLIGHT; i++) q.tell(`thr_told_${i}`);
    await jest.advanceTimersByTimeAsync(0);
    await q.answerAll();
    // Other new storms take every slot; meanwhile the told alerts get more hits (due at once,
    // their half quiet period being over), and then one more storm opens.
    for (let i = 0; i < MAX_SIGNALS_IN_FLIGHT; i++) q.tell(`thr_busy_${i}`);
    await jest.advanceTimersByTimeAsync(gather.quietMs);
    for (let i = 0; i < MAX_SIGNALS_IN_FLIGHT; i++) q.tell(`thr_told_${i}`);
    q.tell('thr_new');
    await jest.advanceTimersByTimeAsync(0);
    expect(q.calls).toHaveLength(2 * MAX_SIGNALS_IN_FLIGHT);
    q.calls.at(-1)!.answer();
    await jest.advanceTimersByTimeAsync(0);
    expect(q.calls.at(-1)!.event).toBe('thr_new');
  });

  it('when the storm check is over or the alert has ended, then more hits send nothing', async () => {
    const q = queue();
    q.tell('thr_long');
    q.tell('thr_ended');
    await jest.advanceTimersByTimeAsync(0);
    q.calls[0]!.answer();
    q.calls[1]!.answer(false);
    await jest.advanceTimersByTimeAsync(0);
    q.tell('thr_ended');
    await jest.advanceTimersByTimeAsync(gather.quietMs);
    expect(q.calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(gather.maxMs);
    q.tell('thr_long');
    await jest.advanceTimersByTimeAsync(gather.quietMs);
    expect(q.calls).toHaveLength(2);
  });
});
