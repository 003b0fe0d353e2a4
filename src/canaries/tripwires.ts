import type { Clock } from '../clock';
import { DomainError } from '../errors';
import type { EvidenceStore } from '../evidence/evidence.store';
import { newId } from '../ids';
import { KeyedBatches } from '../keyed-batches';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import { signalThreatAlert } from '../alerts/alert-workflows';
import type { CanariesRepository } from './canaries.repository';
import { tokenDigest } from './decoys';
import { hitPlatform } from './kinds';
import { HitJournal, type Held, type JournalSettings } from './hit-journal';
import type {
  HitSource,
  HitVia,
  ThreatEvent,
  ThreatHit,
  ThreatsRepository,
} from './threats.repository';

export const THREAT_HIT_KIND = 'threat.hit';
const REPLAY_SLICE = 500;
const JOURNAL_RETRY_AFTER_SECONDS = 5;

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

interface HitReport {
  id: string;
  canaryId: string;
  at: Date;
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
  /** How long an alert waits for more hits of its storm, and at most. */
  gather: { quietMs: number; maxMs: number };
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
 * outage loses it. It is then recorded off the answer's path: hits of one canary and source are
 * group-committed (evidence, hit log, event and canary counts, one signal per batch); what could
 * not be recorded is replayed from the journal, by hit id, until it is.
 */
export class Tripwires {
  private readonly batches: KeyedBatches<HitReport, void>;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly journal: HitJournal<JournalEntry>;

  constructor(private readonly deps: TripwireDeps) {
    this.batches = new KeyedBatches((stormKey, hits) => this.record(stormKey, hits));
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
      id: newId('hit'),
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
      .then(() => this.submit(canaryId, entry))
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

  private submit(canaryId: string, { id, at, source, requestId }: JournalEntry): Promise<void> {
    const from = source.mailServer?.ip ?? source.resolver?.ip ?? source.ip;
    const hit = { id, canaryId, at: new Date(at), source, requestId };
    return this.batches.submit(`${canaryId}|${from}`, hit);
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
          if (canaryId) await this.submit(canaryId, entry);
        }),
      );
    }
  }

  /** Waits for hits still being recorded (tests). */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /** Shutdown: what is recorded leaves the journal; what is not stays for the next start. */
  async close(): Promise<void> {
    await this.flush();
    await this.journal.stop();
  }

  /**
   * One batch of one canary and source: the canary is read once, a retired one records nothing,
   * and hits already in the hit log (replayed from the journal) are skipped. The storm is judged
   * by the hits' own time, so a replay joins the event its hits would have joined.
   *
   * One hit, one event, one alert, whatever fails: the storm is claimed first (its event id derived
   * from the storm key and its first hit's time; the storm's unique key lets one replica open it
   * and the others join), then the event is written if it is not there yet, and only then is the
   * alert signalled (`alert-<threatEventId>`) and the hits sealed and logged. A replay after a
   * crash anywhere in between finds the same storm, the same event and the same alert.
   */
  private async record(stormKey: string, batch: HitReport[]): Promise<void[]> {
    const { threats, settings } = this.deps;
    const done = batch.map(() => undefined);
    // Three reads at once rather than one after another: they stand between a hit and its alert.
    // The storm is looked up for the batch's first hit; a replay whose first hit is already
    // recorded asks again for its first new one.
    const [canary, recorded, storm] = await Promise.all([
      this.deps.canaries.findById(batch[0]!.canaryId),
      threats.recordedHitIds(batch.map((h) => h.id)),
      threats.openStorm(stormKey, batch[0]!.at),
    ]);
    if (!canary || canary.retiredAt) return done;
    const hits = batch.filter((h) => !recorded.has(h.id));
    const [first] = hits;
    if (!first) return done;
    const threatEventId =
      (first === batch[0] ? storm : await threats.openStorm(stormKey, first.at)) ??
      (await threats.claimStorm(stormKey, first.at, settings.stormWindowMs));
    const opened = await threats.openEvent({
      id: threatEventId,
      accountId: canary.accountId,
      canaryId: canary.id,
      canaryKind: canary.kind,
      platform: canary.platform ?? hitPlatform(canary.kind, first.source),
      source: first.source,
      firstHitAt: first.at,
      lastHitAt: first.at,
      hitCount: 0,
      alert: null,
    });
    // The alert starts (or hears of these hits) as soon as its event exists, while the hits are
    // sealed and logged. Should a write fail, the journal replays the batch, which signals it
    // again: a storm's count may then include it twice, never miss it.
    const alerting = this.alert(canary, threatEventId, first, hits.length, opened);
    try {
      await this.seal(canary, threatEventId, hits);
    } finally {
      await alerting;
    }
    return done;
  }

  /** The hits sealed in the account's evidence log, then in the hit log and the canary's tally. */
  private async seal(
    canary: { id: string; accountId: string; kind: ThreatEvent['canaryKind'] },
    threatEventId: string,
    hits: HitReport[],
  ): Promise<void> {
    const { threats, evidence, canaries } = this.deps;
    const records = await evidence.appendMany(
      canary.accountId,
      hits.map((h) => ({
        kind: THREAT_HIT_KIND,
        data: {
          threat_event_id: threatEventId,
          canary_id: canary.id,
          canary_kind: canary.kind,
          at: h.at.toISOString(),
          via: h.source.via,
          ip: h.source.ip,
          user_agent: h.source.userAgent,
          mail_server: h.source.mailServer,
          ...(h.source.resolver && { resolver: h.source.resolver }),
          request_id: h.requestId,
        },
      })),
    );
    const logged: ThreatHit[] = hits.map((h, i) => ({
      id: h.id,
      accountId: canary.accountId,
      canaryId: canary.id,
      threatEventId,
      at: h.at,
      source: h.source,
      requestId: h.requestId,
      evidence: {
        logId: records[i]!.id,
        seq: records[i]!.seq,
        contentHash: records[i]!.contentHash!,
      },
    }));
    await threats.addHits(threatEventId, logged);
    await canaries.countHits(canary.id, hits.length, hits.at(-1)!.at);
  }

  /** Starts or signals the event's alert; a refusal leaves the start to the start reconciler. */
  private async alert(
    canary: { id: string; accountId: string },
    threatEventId: string,
    first: HitReport,
    hits: number,
    opened: boolean,
  ): Promise<void> {
    const { threats, temporal, settings } = this.deps;
    try {
      await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        signalThreatAlert(
          temporal,
          {
            accountId: canary.accountId,
            threatEventId,
            gather: settings.gather,
            canaryId: canary.id,
            requestId: first.requestId ?? undefined,
          },
          hits,
        ),
      );
      if (opened) await threats.alertStarted(threatEventId);
    } catch (err) {
      // The event keeps its pending mark: the start reconciler starts the alert once Temporal answers.
      this.deps.log.warn({ err, threatEventId }, 'threat alert not started yet');
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
