import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { alertPayloadSchema, tripwireAlertPayload, type AlertPayload } from '../src/alerts/payload';
import { CanariesRepository, type Canary } from '../src/canaries/canaries.repository';
import { IpEnricher, type IpEnrichment } from '../src/canaries/enrichment';
import { assessRisk, interpret } from '../src/canaries/risk';
import { ThreatsRepository, type ThreatEvent } from '../src/canaries/threats.repository';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import type { DeliveryTargets } from '../src/alerts/delivery-targets';
import {
  THREAT_EVENT_REMOVED,
  type AlertPayloadJson,
  type DeliveryTarget,
} from '../workflows/shared';

export const THREAT_ALERT_KIND = 'threat.alert';
const DAY_MS = 86_400_000;

export interface ThreatAlertDeps {
  db: Db;
  /** The worker's one store, shared by every activity (one group commit per account). */
  evidence: EvidenceStore;
  enricher: IpEnricher;
  /** The worker's one reader of delivery targets, shared with the delivery activities. */
  targets: DeliveryTargets;
}

/** Keeps a threat event's payload and seals it, once per event (the log id is fixed). */
export async function sealThreatAlert(
  deps: { evidence: EvidenceStore; threats: ThreatsRepository },
  accountId: string,
  payload: AlertPayload,
  details: object,
): Promise<void> {
  const threatEventId = payload.data.threatEventId!;
  await deps.evidence.append(accountId, {
    logId: `evd_alert_${threatEventId}`,
    kind: THREAT_ALERT_KIND,
    data: { threat_event_id: threatEventId, ...details, payload },
  });
  await deps.threats.recordAlert(threatEventId, payload);
}

/** A canary's threat event: agent alerts come with their payload. */
type TripwireEvent = ThreatEvent & { canaryKind: Exclude<ThreatEvent['canaryKind'], 'agent'> };

const NO_PLACE = { ip: '', country: '', city: '', org: '' };

function place({ ip, country, city, org }: IpEnrichment) {
  return { ip, country, city, org };
}

export function threatAlertActivities({ db, evidence, enricher, targets }: ThreatAlertDeps) {
  const threats = new ThreatsRepository(db);
  const canaries = new CanariesRepository(db);

  /** The v1 payload of a threat event reporting `hits`: enrichment, risk, interpretation. */
  const buildPayload = async (
    event: TripwireEvent,
    hits: number,
    summary: string,
    read: Promise<Canary | null> = canaries.findById(event.canaryId),
  ) => {
    const relayIp = event.source.mailServer?.ip ?? event.source.resolver?.ip;
    const [canary, looked] = await Promise.all([read, enricher.enrich(relayIp ?? event.source.ip)]);
    const ageDays = canary
      ? Math.max(0, Math.floor((event.firstHitAt.getTime() - canary.createdAt.getTime()) / DAY_MS))
      : 0;
    // A decoy email's mail server and a DNS canary's resolver relay for the attacker: they are
    // enriched and shown as such, and the attacker's own fields stay empty.
    const mail = event.source.mailServer;
    const resolver = event.source.resolver;
    const attacker =
      relayIp !== undefined
        ? { ...NO_PLACE, type: 'unknown', abuseScore: null }
        : { ...place(looked), type: looked.type, abuseScore: looked.abuseScore };
    const risk = assessRisk({
      kind: event.canaryKind,
      attackerType: attacker.type,
      abuseScore: attacker.abuseScore,
      hits,
      ageDays,
    });
    return tripwireAlertPayload(new Date(), {
      alertLevel: risk.alertLevel,
      platform: event.platform,
      memo: canary?.memo ?? '',
      canaryKind: event.canaryKind,
      summary,
      canaryId: event.canaryId,
      canaryAgeDays: ageDays,
      attacker,
      ...(mail && { mailServer: place(looked) }),
      ...(resolver && { resolver: place(looked) }),
      riskScore: risk.riskScore,
      riskLevel: risk.riskLevel,
      interpretation: interpret({
        kind: event.canaryKind,
        memo: canary?.memo ?? '',
        plantedOn: canary?.platform ?? null,
        attackerType: attacker.type,
        sourceIp: event.source.ip,
        hits,
      }),
      threatEventId: event.id,
      triggeredAt: event.firstHitAt.toISOString(),
    });
  };

  const findEvent = async (
    threatEventId: string,
    known?: ThreatEvent | null,
  ): Promise<TripwireEvent> => {
    const event = known ?? (await threats.findEvent(threatEventId));
    if (!event) {
      // Events are removed only with their evidence (a forced delete of a trap or document): a
      // retry would never find it, and would hold the alert, and its worker, forever.
      throw ApplicationFailure.create({
        type: THREAT_EVENT_REMOVED,
        message: `threat event ${threatEventId} was removed before its alert was sent`,
        nonRetryable: true,
      });
    }
    const { canaryKind } = event;
    if (canaryKind === 'agent') throw new Error('agent alerts come with their payload');
    return { ...event, canaryKind };
  };

  /**
   * A threat event's first payload: the one kept on the event if a preparation already ran,
   * else built from the event (`event` then set, and `hits` what it reports).
   */
  const prepare = async (threatEventId: string, hits: number, canary?: Promise<Canary | null>) => {
    const known = await threats.findEvent(threatEventId);
    if (known?.alert) return { payload: known.alert, event: null, hits };
    const event = await findEvent(threatEventId, known);
    const reported = Math.max(hits, event.hitCount, 1);
    const payload = await buildPayload(event, reported, 'canary fired', canary);
    return { payload, event, hits: reported };
  };

  return {
    /**
     * Builds the v1 payload of a threat event's first alert (enrichment failures leave fields
     * empty, never stop the alert). The payload is kept on the event and sealed in the account's
     * evidence log, once per event (here, or by `sealThreatAlert`).
     */
    async prepareThreatAlert(input: {
      threatEventId: string;
      hits: number;
      /** The workflow seals it, and keeps it, with `sealThreatAlert` beside its delivery (absent in older histories). */
      sealApart?: boolean;
    }): Promise<AlertPayloadJson> {
      const { payload, event, hits } = await prepare(input.threatEventId, input.hits);
      if (event && !input.sealApart) {
        await sealThreatAlert({ evidence, threats }, event.accountId, payload, { hits });
      }
      return payload;
    },

    /**
     * The same first payload and the channels it goes to, read at once: the event, its canary and
     * the account's channels in one round trip rather than three one after the other. The workflow
     * seals the payload, and keeps it on the event, with `sealThreatAlert` beside its delivery.
     */
    async prepareThreatDelivery(input: {
      accountId: string;
      threatEventId: string;
      /** Read beside the event when known (a reconciler's start leaves it to the event). */
      canaryId?: string;
      hits: number;
      channelIds?: string[];
    }): Promise<{ payload: AlertPayloadJson; targets: DeliveryTarget[] }> {
      const canary = input.canaryId ? canaries.findById(input.canaryId) : undefined;
      const reading = targets.read(input.accountId, input.channelIds);
      // Both are awaited below; handled here too, so that when the event read fails first
      // neither is left rejected with no handler.
      for (const read of [canary, reading]) read?.catch(() => undefined);
      const { payload } = await prepare(input.threatEventId, input.hits, canary);
      const route = await reading;
      return { payload, targets: route({ event: payload.event, level: payload.data.alertLevel }) };
    },

    /**
     * Seals a prepared first alert in the account's evidence log, once per event (fixed log id),
     * and keeps it on the event.
     */
    async sealThreatAlert(input: {
      accountId: string;
      payload: AlertPayloadJson;
      hits: number;
    }): Promise<void> {
      const payload = alertPayloadSchema.parse(input.payload);
      await sealThreatAlert({ evidence, threats }, input.accountId, payload, { hits: input.hits });
    },

    /**
     * A storm's follow-up: the same event reporting every hit so far, its summary naming those
     * that came after the first alert. Sealed in the evidence log once per event; the event keeps
     * its first alert.
     */
    async prepareStormFollowUp(input: {
      threatEventId: string;
      hits: number;
      newHits: number;
    }): Promise<AlertPayloadJson> {
      const event = await findEvent(input.threatEventId);
      const hits = Math.max(input.hits, event.hitCount);
      const more = `${input.newHits} more hit${input.newHits === 1 ? '' : 's'}`;
      const payload = await buildPayload(
        event,
        hits,
        `canary fired again: ${more} since the first alert`,
      );
      await evidence.append(event.accountId, {
        logId: `evd_alert_${event.id}_follow_up`,
        kind: THREAT_ALERT_KIND,
        data: { threat_event_id: event.id, hits, follow_up: true, payload },
      });
      return payload;
    },
  };
}
