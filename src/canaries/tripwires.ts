import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import type { EvidenceStore } from '../evidence/evidence.store';
import { newTimeOrderedId } from '../ids';
import { KeyedBatches } from '../keyed-batches';
import type { Logger } from '../logger';
import type { Temporal } from '../temporal/client';
import { ThreatAlertStarts } from '../alerts/threat-alert-starts';
import type { CanariesRepository } from './canaries.repository';
import { tokenDigest } from './decoys';
import { hitPlatform } from './kinds';
import { HitJournal, type Held, type JournalSettings } from './hit-journal';
import { recordsFor, type HitReport, type NewHits, type StormHits } from './hit-records';
import type { HitSource, HitVia, Storm, ThreatHit, ThreatsRepository } from './threats.repository';

export const THREAT_HIT_KIND = 'threat.hit';
const REPLAY_SLICE = 500;
const JOURNAL_RETRY_AFTER_SECONDS = 5;
const RECORDER = 'hits';
const SEALER = 'seal';
/**
 * A seal waits this long for more hits: under a flood on one storm a batch then takes tens of
 * hits, not the handful that arrive during one write, and so fewer writes per hit (measured in
 * `npm run bench:tripwire`, docs/benchmarks.md). Nothing waits on it: the alert starts before the
 * seal, and the journal holds the hit meanwhile.
 */
const SEAL_GATHER_MS = 50;
/** Storms this process keeps in memory (of those whose window is open), newest used first. */
const KNOWN_STORMS = 10_000;

/**
 * A presented hit as the journal keeps it: the digests of the strings (never the strings), and the
 * hit id, fixed before the answer, that makes recording it again a no-op.
 */
interface JournalEntry {
  id: string;
  at: string;
  digests: string[];
  source: HitSource;
  requestId: string | null;
}

/**
 * What a listener saw, in plain values: the strings presented (a password, a key id, a token, a
 * hostname label), how, and by whom. `client.ip` is empty when only a relay is known (a mail
 * server, a DNS resolver): the relay is recorded as such, never as the attacker.
 */
export interface PresentedHit extends Presenter {
  secrets: (string | undefined)[];
  via: HitVia;
  mailServer?: HitSource['mailServer'];
  resolver?: HitSource['resolver'];
}

/** Who presented a string: the client's address and agent, and the request it came in on. */
export interface Presenter {
  client: { ip: string; userAgent: string };
  requestId?: string | null;
}

export interface TripwireSettings {
  /** Hits on one canary from one source within this window join one threat event and one alert. */
  stormWindowMs: number;
  /** How long a storm's follow-up waits for more hits, and at most. */
  gather: { quietMs: number; maxMs: number };
}

/**
 * A storm's hits handed to the seal. `later`: its event was open before them, so its first alert
 * may not report them, and its storm's follow-up is started (`ThreatAlertStarts.followUp`).
 */
type SealGroup = StormHits & { later: boolean };

/** A hit whose storm is open and alert started: settled once the hit is sealed and logged. */
interface Opened {
  sealed: Promise<void>;
}

interface TripwireDeps {
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  evidence: EvidenceStore;
  temporal: Temporal;
  clock: Clock;
  log: Logger;
  settings: TripwireSettings;
  journal: JournalSettings;
}

/**
 * Where canaries fire. Every listener hands what it saw to `recordHit` and answers after it
 * returns; by then the hit is in the local journal (fsync'd), so neither a crash nor a database
 * outage loses it. It is then recorded off the answer's path, in two group commits of every
 * canary and source: the hits that arrive while a batch's storms are being opened go in the next
 * (a new storm's claim and event; a new hit of a storm this process opened skips this step), and
 * each new storm's alert is started from a queue; the opened hits that arrive while a seal is being
 * written go in the next (evidence, hit log, event and canary counts, one write each). What could
 * not be recorded is replayed from the journal, by hit id, until it is.
 */
export class Tripwires {
  private readonly batches: KeyedBatches<HitReport, Opened>;
  private readonly sealings: KeyedBatches<SealGroup, void>;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly journal: HitJournal<JournalEntry>;
  private readonly starts: ThreatAlertStarts;
  /**
   * Storms whose event this process has written or found written, by storm key: a storm's later
   * batches join its event with no read and no write but their hits'. A storm's window never
   * moves once claimed (another one under its key is claimed only once it has closed), so a kept
   * storm is right for every hit inside its window.
   */
  private readonly known: LRUCache<string, Storm>;
  /** Events whose storm follow-up this process has asked for: one start per storm. */
  private readonly followedUp: LRUCache<string, true>;

  constructor(private readonly deps: TripwireDeps) {
    this.known = new LRUCache({ max: KNOWN_STORMS, ttl: deps.settings.stormWindowMs });
    this.followedUp = new LRUCache({ max: KNOWN_STORMS, ttl: deps.settings.stormWindowMs });
    // One key: every hit waiting when a batch ends goes in the next, whatever its canary.
    this.batches = new KeyedBatches((_key, hits) => this.record(hits));
    // Sealing is a group commit of its own: a storm's first hit is not held behind the writes of
    // the batch before it, nor its alert behind the seal's gathering.
    this.sealings = new KeyedBatches(async (_key, groups) => {
      await this.seal(groups);
      return groups.map(() => undefined);
    }, SEAL_GATHER_MS);
    this.starts = new ThreatAlertStarts(deps);
    this.journal = new HitJournal(deps.journal, (entries) => this.replay(entries), deps.log);
  }

  /** Replays the journal (what a previous run left, what failed since) now and continuously. */
  startReplay(): void {
    this.journal.start();
  }

  /** One replay pass (tests). */
  replayJournal(): Promise<void> {
    return this.journal.replayOnce();
  }

  /**
   * Whether one of these strings is a live canary's token, without recording anything (the decoy
   * mail listener asks this to refuse unknown recipients). One point read per string.
   */
  canaryFor(candidates: (string | undefined)[]): Promise<string | null> {
    const present = presentable(candidates);
    return present.length ? this.deps.canaries.canaryIdForToken(present) : Promise.resolve(null);
  }

  /**
   * The one way a hit gets in: every listener (HTTP refusals, `/r/<token>`, decoy mail, DNS,
   * Postgres, cloud and Kubernetes decoys, shield, leak reports) calls this and answers only after
   * it returns. Every presented string is journaled and looked up alike, canary or not, so the
   * answer neither differs nor takes longer; a hit is then handed to the recorder, and its canary
   * id returned. With the database down the lookup fails: the answer is the unknown token's, and
   * the journal records the hit once the database is back. A hit the journal could not write is
   * refused with a 503 `DomainError` (`dependency: tripwire_journal`), never answered.
   */
  async recordHit(hit: PresentedHit): Promise<string | null> {
    const digests = presentable(hit.secrets).map(tokenDigest);
    if (!digests.length) return null;
    const entry: JournalEntry = {
      id: newTimeOrderedId('hit'),
      at: this.deps.clock().toISOString(),
      digests,
      source: {
        ip: hit.client.ip,
        userAgent: hit.client.userAgent.slice(0, 512),
        via: hit.via,
        mailServer: hit.mailServer ?? null,
        ...(hit.resolver && { resolver: hit.resolver }),
      },
      requestId: hit.requestId ?? null,
    };
    // The lookup runs while the entry is written, and a canary's hit is recorded as soon as it is
    // known: the answer waits for the entry, the alert does not. A write that fails while the
    // lookup is pending is handled below, never left unhandled.
    const appending = this.journal.append(entry);
    appending.catch(() => undefined);
    let canaryId: string | null = null;
    let lookupFailed: unknown = null;
    try {
      canaryId = await this.deps.canaries.canaryIdForDigests(digests);
    } catch (err) {
      lookupFailed = err;
    }
    if (canaryId) this.report(canaryId, entry, appending);
    let held: Held;
    try {
      held = await appending;
    } catch (err) {
      this.deps.log.error({ err, hitId: entry.id }, 'tripwire hit refused: journal not written');
      throw journalUnavailable(err);
    }
    if (lookupFailed) {
      held.settle(false);
      this.deps.log.warn(
        { err: lookupFailed, hitId: entry.id },
        'tripwire hit journaled, recorded later',
      );
      return null;
    }
    if (!canaryId) held.settle(true);
    return canaryId;
  }

  /**
   * Records the hit in the background, from the next turn of the event loop; once its journal
   * entry is written it leaves the journal, or, should recording fail, stays for the replay.
   */
  private report(canaryId: string, entry: JournalEntry, appending: Promise<Held>): void {
    const task = new Promise((next) => setImmediate(next))
      .then(() => this.submit(canaryId, entry, true))
      .then(
        () => true,
        (err: unknown) => {
          this.deps.log.warn(
            { err, hitId: entry.id },
            'tripwire hit not recorded yet, replayed later',
          );
          return false;
        },
      )
      // An entry that could not be written fails the request itself: nothing to settle.
      .then((recorded) =>
        appending.then(
          (held) => held.settle(recorded),
          () => undefined,
        ),
      );
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  private async submit(
    canaryId: string,
    { id, at, source, requestId }: JournalEntry,
    fresh: boolean,
  ): Promise<void> {
    const from = source.mailServer?.ip ?? source.resolver?.ip ?? source.ip;
    const stormKey = `${canaryId}|${from}`;
    const hit: HitReport = { id, canaryId, stormKey, at: new Date(at), source, requestId, fresh };
    // A new hit of a storm this process opened, its canary kept and live, goes straight to the
    // seal: the recorder would read and write nothing for it.
    const storm = fresh ? this.knownStorm(stormKey, hit.at) : undefined;
    const canary = storm && this.deps.canaries.keptHitTarget(canaryId);
    if (storm && canary && !canary.retiredAt) {
      const { threatEventId } = storm;
      const group = { stormKey, canary, hits: [hit], threatEventId, later: true };
      return this.sealings.submit(SEALER, group);
    }
    const { sealed } = await this.batches.submit(RECORDER, hit);
    await sealed;
  }

  /**
   * Journal entries again, canary or not (the lookup may have failed): `record` skips recorded hit
   * ids. In slices, so a long outage's journal does not queue all its reads at once.
   */
  private async replay(entries: JournalEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += REPLAY_SLICE) {
      await Promise.all(
        entries.slice(i, i + REPLAY_SLICE).map(async (entry) => {
          const canaryId = await this.deps.canaries.canaryIdForDigests(entry.digests);
          if (canaryId) await this.submit(canaryId, entry, false);
        }),
      );
    }
  }

  /** Waits for hits still being recorded (tests). */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
    await this.starts.idle();
  }

  /** Shutdown: what is recorded leaves the journal; what is not stays for the next start. */
  async close(): Promise<void> {
    await this.flush();
    await this.journal.stop();
  }

  /**
   * One batch: every hit submitted while the previous batch's storms were being opened, of any
   * canary and source, in a few writes for all of them; its hits are then handed to the seal's
   * own group commit, and each settles once sealed. Hit ids are read only for replayed hits (a fresh one
   * cannot be in the log yet), and skipped once in the log; canaries are read once (and kept:
   * `hitTargets`), and a retired canary records nothing. Each storm (canary and source) is judged
   * by its first new hit's own time, so a replay joins the event its hits would have joined.
   *
   * One hit, one event, one alert, whatever fails: a storm is claimed first (its event id derived
   * from the storm key and its first hit's time; the storm's unique key lets one replica open it
   * and the others join), beside the canary's read, then its event is written if it is not there
   * yet, and only then is the alert started (`alert-<threatEventId>`) and the hits sealed and
   * logged. A replay after a crash anywhere in between finds the same storm, the same event and
   * the same alert. A storm this process knows costs none of these: its event is known written.
   */
  private async record(batch: HitReport[]): Promise<Opened[]> {
    const { threats, canaries, settings } = this.deps;
    const done = batch.map(() => ({ sealed: Promise.resolve() }));
    const replayed = batch.filter((hit) => !hit.fresh).map((hit) => hit.id);
    const recorded = replayed.length ? await threats.recordedHitIds(replayed) : new Set();
    const news = [...Map.groupBy(batch, (hit) => hit.stormKey)]
      .map(([stormKey, reports]) => ({
        stormKey,
        hits: reports.filter((h) => !recorded.has(h.id)),
      }))
      .filter(({ hits }) => hits.length);
    if (!news.length) return done;
    // The claims and the canaries' read at once: both stand between a storm's first hit and its
    // alert. A claim made for a canary found retired meanwhile opens a storm no hit joins.
    const known = news.map(({ stormKey, hits }) => this.knownStorm(stormKey, hits[0]!.at));
    const claims = news
      .filter((_, i) => !known[i])
      .map(({ stormKey, hits }) => ({ stormKey, at: hits[0]!.at }));
    const [found, claimed] = await Promise.all([
      canaries.hitTargets([...new Set(news.map(({ hits }) => hits[0]!.canaryId))]),
      threats.claimStorms(claims, settings.stormWindowMs),
    ]);
    const live = new Map(found.filter((c) => !c.retiredAt).map((c) => [c.id, c]));
    const storms = known.map((storm) => storm ?? claimed.shift()!);
    const opening = news.flatMap(({ stormKey, hits }, i) => {
      const canary = live.get(hits[0]!.canaryId);
      return canary ? [{ group: { stormKey, canary, hits }, storm: storms[i]! }] : [];
    });
    const sealing = new Map<string, Promise<void>>();
    for (const group of await this.openStorms(opening)) {
      const sealed = this.sealings.submit(SEALER, group);
      // Awaited by the hits' own recording, which the journal settles by.
      sealed.catch(() => undefined);
      sealing.set(group.stormKey, sealed);
    }
    return batch.map((hit) => ({ sealed: sealing.get(hit.stormKey) ?? Promise.resolve() }));
  }

  /** The storm this process knows `at` falls in, its event written, if it knows one. */
  private knownStorm(stormKey: string, at: Date): (Storm & { written: true }) | undefined {
    const storm = this.known.get(stormKey);
    if (!storm) return undefined;
    const closes = storm.closesAt.getTime();
    const inside = closes - this.deps.settings.stormWindowMs <= at.getTime() && at < storm.closesAt;
    return inside ? { ...storm, written: true } : undefined;
  }

  /**
   * The storms' events, written unless known written (in one write), and each alert started as
   * soon as its event exists (once per storm this process learns of), while the hits are sealed
   * and logged. Hits that join an event opened before them are `later`: the seal starts the
   * storm's follow-up for them. Should the write fail, the journal replays the batch, which starts
   * the alerts again: nothing is sent twice.
   */
  private async openStorms(
    opening: { group: NewHits; storm: Storm & { written?: true } }[],
  ): Promise<SealGroup[]> {
    const { threats } = this.deps;
    const fresh = opening
      .filter(({ storm }) => !storm.written)
      .map(({ group: { stormKey, canary, hits }, storm }) => {
        const first = hits[0]!;
        const event = {
          canaryKind: canary.kind,
          platform: canary.platform ?? hitPlatform(canary.kind, first.source),
          source: first.source,
          firstHitAt: first.at,
        };
        return { stormKey, canary, first, hits: hits.length, storm, event };
      });
    const opened = await threats.openEvents(
      fresh.map(({ canary, first, storm, event }) => ({
        id: storm.threatEventId,
        accountId: canary.accountId,
        canaryId: canary.id,
        ...event,
        lastHitAt: first.at,
        hitCount: 0,
        alert: null,
      })),
    );
    fresh.forEach(({ stormKey, canary, first, hits, storm, event }, i) => {
      const { threatEventId, closesAt } = storm;
      this.known.set(stormKey, { threatEventId, closesAt });
      this.starts.start(
        {
          accountId: canary.accountId,
          threatEventId,
          canaryId: canary.id,
          requestId: first.requestId ?? undefined,
          // Only the event this process wrote is known as written: another's first hit is its own.
          ...(opened[i] && {
            event: {
              ...event,
              firstHitAt: first.at.toISOString(),
              hits,
              canary: {
                createdAt: canary.createdAt.toISOString(),
                memo: canary.memo,
                platform: canary.platform ?? null,
              },
            },
          }),
        },
        opened[i]!,
      );
    });
    const openedHere = new Set(fresh.filter((_, i) => opened[i]).map((f) => f.storm.threatEventId));
    return opening.map(({ group, storm: { threatEventId } }) => ({
      ...group,
      threatEventId,
      later: !openedHere.has(threatEventId),
    }));
  }

  /**
   * The hits sealed in their accounts' evidence logs, then in the hit log and the canaries'
   * tallies: one append per account (one sync), then one write each for hits, events and
   * canaries, the last of them journaled, which makes the two before it durable with it (a second
   * sync). A storm's hits from one source share a record (hit-records.ts): under a flood on one
   * canary a seal is then a few records, not one per hit. A record's id is derived from its first
   * hit's, and a replayed hit already in a record (a crash came between the append and the hit log)
   * goes to that record again, whose append then finds it stored rather than sealing the hit twice.
   * An event's first later hits mark it in the events' write, and its follow-up is started once
   * they are durable (the mark cleared then; the start reconciler starts a follow-up left marked).
   */
  private async seal(groups: SealGroup[]): Promise<void> {
    const { threats, evidence, canaries } = this.deps;
    const replayed = groups.flatMap(({ hits }) => hits.filter((h) => !h.fresh).map((h) => h.id));
    const sealedBefore = replayed.length
      ? await evidence.recordsOfHits(replayed)
      : new Map<string, string>();
    // A storm's groups (one from each recorder batch or straight hit since the last seal) as one.
    const storms = [...Map.groupBy(groups, (group) => group.stormKey).values()].map((ofStorm) => ({
      ...ofStorm[0]!,
      hits: ofStorm.flatMap((group) => group.hits),
      later: ofStorm.some((group) => group.later),
    }));
    const byAccount = Map.groupBy(storms, (storm) => storm.canary.accountId);
    const logged = await Promise.all(
      [...byAccount].map(async ([accountId, ofAccount]) => {
        const sealing = ofAccount.flatMap((storm) => recordsFor(storm, sealedBefore));
        const records = await evidence.appendMany(
          accountId,
          sealing.map(({ logId, data }) => ({ logId, kind: THREAT_HIT_KIND, data })),
        );
        return sealing.flatMap(({ storm: { canary, threatEventId }, hits }, i) => {
          const record = records[i]!;
          const sealed = { logId: record.id, seq: record.seq, contentHash: record.contentHash! };
          return hits.map((h): ThreatHit => ({
            id: h.id,
            accountId,
            canaryId: canary.id,
            threatEventId,
            at: h.at,
            source: h.source,
            requestId: h.requestId,
            evidence: sealed,
          }));
        });
      }),
    );
    const grown = storms.filter((s) => s.later && !this.followedUp.has(s.threatEventId));
    await threats.addHits(logged.flat(), new Set(grown.map((s) => s.threatEventId)));
    // One tally per canary: a seal takes many groups of one canary's hits (a recorder batch's, or
    // one hit sent straight to it), and each update of a tally rewrites the canary's document.
    await canaries.countHits(
      [...Map.groupBy(groups, (group) => group.canary.id)].map(([canaryId, ofCanary]) => {
        const hits = ofCanary.flatMap((group) => group.hits);
        const lastAt = hits.reduce((last, hit) => (hit.at > last ? hit.at : last), hits[0]!.at);
        return { canaryId, hits: hits.length, lastAt };
      }),
    );
    for (const { canary, threatEventId, hits } of grown) {
      this.followedUp.set(threatEventId, true);
      this.starts.followUp({
        accountId: canary.accountId,
        threatEventId,
        gather: this.deps.settings.gather,
        canaryId: canary.id,
        requestId: hits[0]!.requestId ?? undefined,
      });
    }
  }
}

/**
 * A hit that could not be journaled is refused (never answered as if recorded): 503, retry
 * shortly. Once the journal's disk takes writes again, hits are taken again.
 */
function journalUnavailable(err: unknown): DomainError {
  const code = (err as { code?: unknown }).code;
  return new DomainError(
    'unavailable',
    {
      error: 'dependency_unavailable',
      dependency: 'tripwire_journal',
      message: `The tripwire journal could not be written${typeof code === 'string' ? ` (${code})` : ''}: retry shortly`,
    },
    JOURNAL_RETRY_AFTER_SECONDS,
  );
}

/** The strings worth a lookup: present, and no longer than any token. */
const presentable = (candidates: (string | undefined)[]): string[] =>
  candidates.filter((c): c is string => !!c && c.length <= 2048);
