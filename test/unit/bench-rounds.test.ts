import type { CpuReading, Part } from '../../bench/support/cpu';
import { interleave, roundOptionsWith } from '../../bench/support/rounds';

/**
 * A stack meter whose CPU only moves when told: each variant's run spends a known amount, and the
 * settling wait after it spends the stack's rest, which the wait reports back.
 */
function scriptedStack() {
  let worker = 0;
  return {
    meter: {
      parts: (): Part[] => ['worker'],
      read: (): CpuReading => new Map([['worker', worker]]),
    },
    spend(seconds: number) {
      worker += seconds;
    },
  };
}

describe('benchmark rounds', () => {
  beforeEach(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  const options = { minRounds: 3, maxRounds: 3, tolerance: 0.1 };

  it("leaves out what the stack spent at rest while a run's effects settled", async () => {
    const stack = scriptedStack();
    // The alert's run leaves more to settle than the floor's: a longer wait, more idle CPU.
    let waitAfter = 0;
    const comparison = await interleave(
      {
        floor: () => {
          stack.spend(1);
          waitAfter = 0.5;
          return Promise.resolve({ ops: 10, seconds: 1 });
        },
        alert: () => {
          stack.spend(2);
          waitAfter = 1.5;
          return Promise.resolve({ ops: 10, seconds: 1 });
        },
      },
      stack.meter,
      {
        ...options,
        settle: () => {
          stack.spend(waitAfter);
          return Promise.resolve(new Map([['worker', waitAfter]]));
        },
      },
    );
    const [floor, alert] = comparison.rows;
    expect(floor!.cpu.get('worker')).toBeCloseTo(100);
    expect(alert!.cpu.get('worker')).toBeCloseTo(200);
    expect(alert!.cpuRatio).toBeCloseTo(2);
  });

  it('runs the baseline between every two other runs, and pairs each run with both of its baseline runs', async () => {
    const stack = scriptedStack();
    const order: string[] = [];
    // The machine slows down steadily: each run's work costs 10 % more than the run before.
    let slowdown = 1;
    const variant = (name: string, seconds: number) => () => {
      order.push(name);
      stack.spend(seconds * slowdown);
      slowdown += 0.1;
      return Promise.resolve({ ops: 10, seconds: 1 });
    };
    const comparison = await interleave(
      { floor: variant('floor', 1), alert: variant('alert', 2), three: variant('three', 3) },
      stack.meter,
      options,
    );
    expect(order).toEqual([
      'floor',
      ...['alert', 'floor', 'three', 'floor'],
      ...['alert', 'floor', 'three', 'floor'],
      ...['alert', 'floor', 'three', 'floor'],
    ]);
    const [floor, alert, three] = comparison.rows;
    // Against the mean of the runs around it, a steady drift cancels out.
    expect(alert!.cpuRatio).toBeCloseTo(2);
    expect(three!.cpuRatio).toBeCloseTo(3);
    // The baseline's own figures are the median of its seven runs (the fourth of them).
    expect(floor!.cpu.get('worker')).toBeCloseTo(100 * (1 + 0.1 * 6));
  });

  it('never counts a part below zero', async () => {
    const stack = scriptedStack();
    const comparison = await interleave(
      {
        quiet: () => Promise.resolve({ ops: 10, seconds: 1 }),
        busy: () => {
          stack.spend(1);
          return Promise.resolve({ ops: 10, seconds: 1 });
        },
      },
      stack.meter,
      {
        ...options,
        // A rest estimate above what the wait really cost (a reading at rest can be high).
        settle: () => Promise.resolve(new Map([['worker', 0.2]])),
      },
    );
    expect(comparison.rows[0]!.cpu.get('worker')).toBe(0);
    expect(comparison.rows[1]!.cpu.get('worker')).toBeCloseTo(80);
  });

  it('counts the whole wait when the settling reports nothing', async () => {
    const stack = scriptedStack();
    const whole = await interleave(
      {
        floor: () => {
          stack.spend(1);
          return Promise.resolve({ ops: 10, seconds: 1 });
        },
      },
      stack.meter,
      {
        ...options,
        settle: () => {
          stack.spend(0.5);
          return Promise.resolve();
        },
      },
    );
    expect(whole.rows[0]!.cpu.get('worker')).toBeCloseTo(150);
  });

  it("takes a benchmark's own round limit unless the command line gives one", () => {
    expect(roundOptionsWith({ maxRounds: 30 }, [])).toEqual({
      minRounds: 5,
      maxRounds: 30,
      tolerance: 0.1,
    });
    expect(roundOptionsWith({}, []).maxRounds).toBe(15);
    expect(roundOptionsWith({ maxRounds: 30 }, ['--max-rounds', '8']).maxRounds).toBe(8);
  });
});
