import type { Clock } from '../clock';
import type { EvidenceStore } from '../evidence/evidence.store';
import { newId } from '../ids';
import { KeyedBatches } from '../keyed-batches';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import { signalThreatAlert } from '../alerts/alert-workflows';
import type { CanariesRepository } from './canaries.repository';
import type { HitSource, HitVia, ThreatHit, ThreatsRepository } from './threats.repository';

export const THREAT_HIT_KIND = 'threat.hit';

interface HitReport {
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
export interface PresentedHit {
  secrets: (string | undefined)[];
  via: HitVia;
  client: { ip: string; userAgent: string };
  mailServer?: HitSource['mailServer'];
  resolver?: HitSource['resolver'];
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
}

/** What a client with no user agent is called; browsers by their family rather than "Mozilla". */
export function platformOf(userAgent: string): string {
  if (!userAgent) return 'unknown client';
  if (userAgent.startsWith('Mozilla/')) return 'web browser';
  return userAgent.split(/[/\s]/)[0]!.slice(0, 60);
}

/**
 * Where canaries fire. Every listener hands what it saw to `recordHit` and answers after it
 * returns; the hit is then recorded off the answer's path: hits of one canary and source are
 * group-committed (evidence, hit log, event and canary counts, one signal per batch).
 */
export class Tripwires {
  private readonly batches: KeyedBatches<HitReport, void>;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: TripwireDeps) {
    this.batches = new KeyedBatches((stormKey, hits) => this.record(stormKey, hits));
  }

  /**
   * Whether one of these strings is a live canary's token, without recording anything (the decoy
   * mail listener asks this to refuse unknown recipients). One point read per string.
   */
  canaryFor(candidates: (string | undefined)[]): Promise<string | null> {
    const present = candidates.filter((c): c is string => !!c && c.length <= 2048);
    return present.length ? this.deps.canaries.canaryIdForToken(present) : Promise.resolve(null);
  }

  /**
   * The one way a hit gets in: every listener (HTTP refusals, `/r/<token>`, decoy mail, DNS,
   * Postgres, cloud and Kubernetes decoys, shield, leak reports) calls this and answers only after
   * it returns. It costs the same lookup whether or not a secret is a canary, so the answer neither
   * differs nor takes longer; a hit is then handed to the recorder, and its canary id returned.
   */
  async recordHit(hit: PresentedHit): Promise<string | null> {
    const canaryId = await this.canaryFor(hit.secrets);
    if (!canaryId) return null;
    this.report({
      canaryId,
      at: this.deps.clock(),
      source: {
        ip: hit.client.ip,
        userAgent: hit.client.userAgent.slice(0, 512),
        via: hit.via,
        mailServer: hit.mailServer ?? null,
        ...(hit.resolver && { resolver: hit.resolver }),
      },
      requestId: hit.requestId ?? null,
    });
    return canaryId;
  }

  /** Records the hit in the background; failures are logged with the whole hit, never dropped silently. */
  private report(hit: HitReport): void {
    const source = hit.source.mailServer?.ip ?? hit.source.resolver?.ip ?? hit.source.ip;
    const task = this.batches.submit(`${hit.canaryId}|${source}`, hit).catch((err: unknown) => {
      this.deps.log.error({ err, hit }, 'tripwire hit could not be recorded');
    });
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  /** Waits for hits still being recorded (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /** One batch of one canary and source: the canary is read once, and a retired one records nothing. */
  private async record(stormKey: string, hits: HitReport[]): Promise<void[]> {
    const { threats, evidence, temporal, clock, settings } = this.deps;
    const [first] = hits as [HitReport];
    const canary = await this.deps.canaries.findById(first.canaryId);
    if (!canary || canary.retiredAt) return hits.map(() => undefined);
    const now = clock();
    let threatEventId = await threats.openStorm(stormKey, now);
    const opened = !threatEventId;
    if (!threatEventId) {
      threatEventId = newId('thr');
      await threats.openEvent(
        {
          id: threatEventId,
          accountId: canary.accountId,
          canaryId: canary.id,
          canaryKind: canary.kind,
          platform:
            canary.platform ??
            (canary.kind === 'email' || canary.kind === 'dns'
              ? canary.kind
              : platformOf(first.source.userAgent)),
          source: first.source,
          firstHitAt: first.at,
          lastHitAt: first.at,
          hitCount: 0,
          alert: null,
        },
        stormKey,
        new Date(now.getTime() + settings.stormWindowMs),
      );
    }
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
      id: newId('hit'),
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
    await this.deps.canaries.countHits(canary.id, hits.length, hits.at(-1)!.at);
    try {
      await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        signalThreatAlert(
          temporal,
          {
            accountId: canary.accountId,
            threat: { threatEventId, gather: settings.gather, canaryId: canary.id },
            requestId: first.requestId ?? undefined,
          },
          hits.length,
        ),
      );
      if (opened) await threats.alertStarted(threatEventId);
    } catch (err) {
      // The event keeps its pending mark: the start reconciler starts the alert once Temporal answers.
      this.deps.log.warn({ err, threatEventId }, 'threat alert not started yet');
    }
    return hits.map(() => undefined);
  }
}
