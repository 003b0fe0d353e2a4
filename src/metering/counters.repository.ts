import type { Collection, Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';
import { KeyedBatches } from '../keyed-batches';
import type { ActionLimits } from './plan-limits';

/** Where an (account, action) stands in its three windows. */
export interface WindowCounts {
  minute: number;
  day: number;
  month: number;
}

/** The windows a request falls in, for one counter (an account's action). */
export interface WindowKeys {
  counter: string;
  month: string;
  day: string;
  minute: string;
}

/** Whether a request got a place in every window, and the counts it saw. */
export interface Admission {
  admitted: boolean;
  /** After its own place when admitted; the counts that refused it when not. */
  counts: WindowCounts;
}

/** The meter's counters, one document per (account, action, month) holding all three windows. */
export interface CounterStore {
  /** One place in the minute, the day and the month if each has room; none otherwise. */
  take(windows: WindowKeys, limits: ActionLimits): Promise<Admission>;
  /** Gives back a place that `take` granted. */
  giveBack(windows: WindowKeys): Promise<void>;
  read(windows: WindowKeys[]): Promise<WindowCounts[]>;
}

interface CounterDoc {
  _id: string;
  /** The month's count. */
  count: number;
  /** The count of each day of the month, by `YYYY-MM-DD`. */
  days?: Record<string, number>;
  /** The latest minute counted in (`YYYY-MM-DDTHH:MM`): older ones are never asked again. */
  minute?: { key: string; count: number };
}

/** Bounds the retries of one batch when other replicas keep taking places first. */
const MAX_ATTEMPTS = 20;

export const countersIndexes: CollectionIndexes = { collection: 'meter_counters', indexes: [] };

const none: WindowCounts = { minute: 0, day: 0, month: 0 };

/** The month's document: its id has kept the form it had when each window was a document. */
const docId = ({ counter, month }: WindowKeys) => `${counter}:month:${month}`;

function countsIn(doc: CounterDoc | null, { day, minute }: WindowKeys): WindowCounts {
  return {
    minute: doc?.minute?.key === minute ? doc.minute.count : 0,
    day: doc?.days?.[day] ?? 0,
    month: doc?.count ?? 0,
  };
}

const less = (c: WindowCounts, n: number): WindowCounts => ({
  minute: c.minute - n,
  day: c.day - n,
  month: c.month - n,
});

const roomIn = (c: WindowCounts, l: ActionLimits) =>
  Math.min(l.burstPerMinute - c.minute, l.perDay - c.day, l.perMonth - c.month);

/** Matches a count (or a missing one: nothing counted yet) that leaves room for `by` more. */
const leavesRoom = (limit: number, by: number) => ({ $not: { $gt: limit - by } });

/**
 * Each request takes its place in all three windows with one atomic conditional update of its
 * month's document, so a request that one window refuses holds no place in the others, and
 * callers on any number of replicas never push a count past its limit. The update matches only
 * while every window leaves room; when the document is missing or its minute is older, the
 * update is an upsert that starts the minute again, and if the document exists but is full the
 * insert collides on the unique `_id` and is refused. Requests for one document that arrive while
 * an update is in flight are combined into the next one (`$inc` by how many wait), so a busy
 * account costs about one write per round trip, not one per request.
 */
export class MongoCounterStore implements CounterStore {
  private readonly counters: Collection<CounterDoc>;
  private readonly batches = new KeyedBatches<ActionLimits & WindowKeys, Admission>(
    (_key, requests) => this.admit(requests[0]!, requests),
  );
  /** The minute each document was last counted in here: which form of update to try first. */
  private readonly minutes = new LRUCache<string, string>({ max: 10_000 });

  constructor(db: Db) {
    this.counters = db.collection<CounterDoc>(countersIndexes.collection);
  }

  take(windows: WindowKeys, limits: ActionLimits): Promise<Admission> {
    return this.batches.submit(`${docId(windows)} ${windows.minute}`, { ...windows, ...limits });
  }

  /**
   * Serves everyone waiting on one document and minute: as many as fit in one update, the rest
   * refused with the counts that refused them. When another replica took places meanwhile the
   * update misses and the room is read again, so a batch gives up only when a window is full.
   */
  private async admit(windows: WindowKeys, requests: ActionLimits[]): Promise<Admission[]> {
    const limits: ActionLimits = {
      burstPerMinute: Math.min(...requests.map((r) => r.burstPerMinute)),
      perDay: Math.min(...requests.map((r) => r.perDay)),
      perMonth: Math.min(...requests.map((r) => r.perMonth)),
    };
    const id = docId(windows);
    let at = windows;
    let counts = none;
    let sameMinute = this.minutes.get(id) === at.minute;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const room = Math.min(requests.length, roomIn(counts, limits));
      if (room <= 0) break;
      const after = await this.incrementIfRoom(at, room, limits, sameMinute);
      if (after) {
        this.minutes.set(id, at.minute);
        const reached = countsIn(after, at);
        // The i-th admitted request's counts are those reached less the places taken after it.
        return requests.map((_, i) =>
          i < room
            ? { admitted: true, counts: less(reached, room - 1 - i) }
            : { admitted: false, counts: reached },
        );
      }
      const doc = await this.counters.findOne({ _id: id });
      // A replica whose clock is behind counts in the newest minute rather than restarting it.
      if (doc?.minute && doc.minute.key > at.minute) at = { ...at, minute: doc.minute.key };
      sameMinute = doc?.minute?.key === at.minute;
      counts = countsIn(doc, at);
    }
    return requests.map(() => ({ admitted: false, counts }));
  }

  private async incrementIfRoom(
    at: WindowKeys,
    by: number,
    limits: ActionLimits,
    sameMinute: boolean,
  ): Promise<CounterDoc | null> {
    const days = `days.${at.day}`;
    const room = {
      _id: docId(at),
      count: leavesRoom(limits.perMonth, by),
      [days]: leavesRoom(limits.perDay, by),
    };
    try {
      return sameMinute
        ? await this.counters.findOneAndUpdate(
            {
              ...room,
              'minute.key': at.minute,
              'minute.count': leavesRoom(limits.burstPerMinute, by),
            },
            { $inc: { count: by, [days]: by, 'minute.count': by } },
            { returnDocument: 'after' },
          )
        : await this.counters.findOneAndUpdate(
            // Only forward: a later minute already started is never set back.
            { ...room, 'minute.key': { $not: { $gte: at.minute } } },
            { $inc: { count: by, [days]: by }, $set: { minute: { key: at.minute, count: by } } },
            { upsert: true, returnDocument: 'after' },
          );
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
  }

  async giveBack(at: WindowKeys): Promise<void> {
    const _id = docId(at);
    const inc = { count: -1, [`days.${at.day}`]: -1 };
    const inMinute = await this.counters.updateOne(
      { _id, count: { $gt: 0 }, 'minute.key': at.minute, 'minute.count': { $gt: 0 } },
      { $inc: { ...inc, 'minute.count': -1 } },
    );
    // The minute has turned since: its place went with it.
    if (!inMinute.matchedCount)
      await this.counters.updateOne({ _id, count: { $gt: 0 } }, { $inc: inc });
  }

  async read(windows: WindowKeys[]): Promise<WindowCounts[]> {
    const docs = await this.counters.find({ _id: { $in: windows.map(docId) } }).toArray();
    const byId = new Map(docs.map((d) => [d._id, d]));
    return windows.map((w) => countsIn(byId.get(docId(w)) ?? null, w));
  }
}
