import { appendFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { HitJournal, type JournalSettings } from '../../src/canaries/hit-journal';

type Entry = { id: string };

/** Called while a file the journal opened is being closed (after `close` began, before it ends). */
const mockClosing: { hook?: () => void } = {};
jest.mock('node:fs/promises', () => {
  const actual = jest.requireActual<typeof import('node:fs/promises')>('node:fs/promises');
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const file = await actual.open(...args);
      const close = file.close.bind(file);
      file.close = () => {
        const closed = close();
        mockClosing.hook?.();
        return closed;
      };
      return file;
    },
  };
});
const log = pino({ level: 'silent' });

function journalIn(
  dir: string,
  replayed: Entry[][] = [],
  fail = false,
  rotateMs = 60_000,
  logger = log,
) {
  const settings: JournalSettings = { dir, rotateMs, replayMs: 60_000, staleMs: 10_000 };
  return new HitJournal<Entry>(
    settings,
    (entries) => {
      if (fail) return Promise.reject(new Error('database down'));
      replayed.push(entries);
      return Promise.resolve();
    },
    logger,
  );
}
const segments = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.endsWith('.jsonl'));

describe('the tripwire journal', () => {
  it('when appends come at once, then each is on disk when it resolves, in one segment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const journal = journalIn(dir);
    await Promise.all(['a', 'b', 'c'].map((id) => journal.append({ id })));
    const [segment] = await segments(dir);
    const lines = (await readFile(join(dir, segment!), 'utf8')).trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as Entry)).toEqual([
      { id: 'a' },
      { id: 'b' },
      { id: 'c' },
    ]);
    await journal.stop();
  });

  it('when every entry is recorded, then the segment is gone once sealed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const journal = journalIn(dir);
    (await journal.append({ id: 'a' })).settle(true);
    await journal.stop();
    expect(await segments(dir)).toEqual([]);
  });

  it('when the process stopped with an entry unrecorded, then the next one replays it and removes it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const first = journalIn(dir);
    (await first.append({ id: 'a' })).settle(true);
    (await first.append({ id: 'b' })).settle(false);
    await first.stop();

    const replayed: Entry[][] = [];
    const next = journalIn(dir, replayed);
    await next.replayOnce();
    expect(replayed).toEqual([[{ id: 'a' }, { id: 'b' }]]);
    expect(await segments(dir)).toEqual([]);
    await next.stop();
  });

  it('when a replay fails, then the segment stays for the next pass', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const first = journalIn(dir);
    (await first.append({ id: 'a' })).settle(false);
    await first.stop();

    const down = journalIn(dir, [], true);
    await down.replayOnce();
    expect(await segments(dir)).toHaveLength(1);
    await down.stop();
    const replayed: Entry[][] = [];
    const back = journalIn(dir, replayed);
    await back.replayOnce();
    expect(replayed).toEqual([[{ id: 'a' }]]);
    await back.stop();
  });

  it('when an entry failed and no more hits come, then a pass after the rotation time replays it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const replayed: Entry[][] = [];
    const journal = journalIn(dir, replayed, false, -1);
    (await journal.append({ id: 'a' })).settle(false);
    await journal.replayOnce();
    expect(replayed).toEqual([[{ id: 'a' }]]);
    expect(await segments(dir)).toEqual([]);
    await journal.stop();
  });

  it('when the last entry settles while its segment is being closed, then the segment is removed once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const journal = journalIn(dir, [], false, 60_000, logger);
    const held = await journal.append({ id: 'a' });
    // The hit's recording ends exactly while the segment's file is being closed.
    mockClosing.hook = () => held.settle(true);
    try {
      await journal.stop();
    } finally {
      delete mockClosing.hook;
    }
    expect(await segments(dir)).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('when another live journal writes in the same directory, then its segment is left alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const live = journalIn(dir);
    (await live.append({ id: 'a' })).settle(false);
    const replayed: Entry[][] = [];
    const other = journalIn(dir, replayed);
    await other.replayOnce();
    expect(replayed).toEqual([]);
    await Promise.all([live.stop(), other.stop()]);
  });

  it('when the last line was torn by a crash, then the complete lines are replayed and the log says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'journal-'));
    const first = journalIn(dir);
    (await first.append({ id: 'a' })).settle(false);
    await first.stop();
    const [segment] = await segments(dir);
    await appendFile(join(dir, segment!), '{"id":"b"');
    const replayed: Entry[][] = [];
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const next = journalIn(dir, replayed, false, 60_000, logger);
    await next.replayOnce();
    expect(replayed).toEqual([[{ id: 'a' }]]);
    expect(lines.map((l) => JSON.parse(l) as { msg: string; unreadable: number })).toEqual([
      expect.objectContaining({ msg: 'tripwire journal: torn line skipped', unreadable: 1 }),
    ]);
    await next.stop();
  });
});
