import { ApplicationFailure, log } from '@temporalio/activity';
import {
  enrichedAddress,
  followUpSummary,
  threatAlertPayload,
  type PayloadCanary,
  type TripwireEvent,
} from '../src/alerts/alert-payloads';
import type { DeliveryTargets, ReadTargets } from '../src/alerts/delivery-targets';
import type { DeliveriesRepository } from '../src/alerts/deliveries.repository';
import type { IpEnricher } from '../src/alerts/enrichment';
import type { AlertPayload } from '../src/alerts/payload';
import type { CanariesRepository } from '../src/canaries/canaries.repository';
import type { HitSource, ThreatsRepository } from '../src/canaries/threats.repository';
import type { EvidenceInput, EvidenceStore } from '../src/evidence/evidence.store';
import {
  INVALID_INPUT,
  THREAT_EVENT_REMOVED,
  type AlertPayloadJson,
  type DeliveryTarget,
  type PreparedThreat,
  type StartedEvent,
  type StormCount,
  type ThreatFirstAttempts,
} from '../workflows/shared';
import type { firstAttempts } from './alert-delivery.activities';
import { parseAlertPayload } from './payload-input';

export const THREAT_ALERT_KIND = 'threat.alert';

/** A write's outcome as a flag: a failure is logged and left to the workflow's own step. */
const succeeded = (what: string) =>
  [
    () => true,
    (err: unknown) => {
      log.warn(`could not ${what}; the workflow does it again`, {
        error: err instanceof Error ? err.message : String(err),
      });
      return false;
    },
  ] as const;

/** What a threat alert's first payload is prepared from (see `prepare`). */
interface ThreatPreparation {
  accountId: string;
  threatEventId: string;
  /** Read beside the event when known (a reconciler's start leaves it to the event). */
  canaryId?: string;
  /** The event as the API that wrote it started the alert. */
  event?: StartedEvent;
  /** The alert's first workflow task: `event` is used as it is, without reading the event. */
  fresh: boolean;
}

/** The event an alert's start carried, as `TripwireEvent` (the API wrote both from one hit). */
function startedEvent(
  input: { accountId: string; threatEventId: string; canaryId: string },
  started: StartedEvent,
): TripwireEvent {
  const firstHitAt = new Date(started.firstHitAt);
  return {
    id: input.threatEventId,
    accountId: input.accountId,
    canaryId: input.canaryId,
    canaryKind: started.canaryKind as TripwireEvent['canaryKind'],
    platform: started.platform,
    source: started.source as HitSource,
    firstHitAt,
    lastHitAt: firstHitAt,
    hitCount: started.hits,
    alert: null,
  };
}

export interface ThreatAlertDeps {
  threats: ThreatsRepository;
  canaries: CanariesRepository;
  /** Where a storm's follow-up reads whether the first alert's round is over. */
  deliveries: DeliveriesRepository;
  /** The worker's one store, shared by every activity (one group commit per account). */
  evidence: EvidenceStore;
  enricher: IpEnricher;
  /** The worker's one reader of delivery targets, shared with the delivery activities. */
  targets: DeliveryTargets;
  /** The delivery activities' first attempts (see `firstAttempts`). */
  sendFirst: ReturnType<typeof firstAttempts>;
}

/** A threat event's sealed alert: once per event (the log id is fixed). */
function threatAlertEntry(payload: AlertPayload, details: object): EvidenceInput {
  const threatEventId = payload.data.threatEventId!;
  return {
    logId: `evd_alert_${threatEventId}`,
    kind: THREAT_ALERT_KIND,
    data: { threat_event_id: threatEventId, ...details, payload },
  };
}

/** Keeps a threat event's payload and seals it, once per event (the log id is fixed). */
export async function sealThreatAlert(
  deps: { evidence: EvidenceStore; threats: ThreatsRepository },
  accountId: string,
  payload: AlertPayload,
  details: object,
  /** The hits the alert reports. */
  hits: number,
): Promise<void> {
  await deps.evidence.append(accountId, threatAlertEntry(payload, details));
  await deps.threats.recordAlert(payload.data.threatEventId!, payload, hits);
}

export function threatAlertActivities({
  threats,
  canaries,
  deliveries,
  evidence,
  enricher,
  targets,
  sendFirst,
}: ThreatAlertDeps) {
  /** The payload of an event reporting `hits` (enrichment failures leave fields empty). */
  const buildPayload = async (
    event: TripwireEvent,
    hits: number,
    summary: string,
    canary: Promise<PayloadCanary | null> = canaries.findById(event.canaryId),
  ) => {
    const [read, looked] = await Promise.all([canary, enricher.enrich(enrichedAddress(event))]);
    return threatAlertPayload(new Date(), { event, canary: read, looked, hits, summary });
  };

  const tripwireEvent = (
    threatEventId: string,
    event: Awaited<ReturnType<ThreatsRepository['findEvent']>>,
  ): TripwireEvent => {
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
    if (canaryKind === 'agent') {
      throw ApplicationFailure.create({
        type: INVALID_INPUT,
        message: `threat event ${threatEventId} is an agent's: agent alerts come with their payload`,
        nonRetryable: true,
      });
    }
    return { ...event, canaryKind };
  };

  /**
   * A threat event's first payload, the hits it reports, and the channels it goes to, read at
   * once. In the alert's first task (`fresh`: nothing can be kept on the event yet), the event
   * and its canary as the API's start carried them (`event`) and the account's channels are all
   * it reads; otherwise it reads the event and the canary too, and reuses the payload kept on the
   * event when a preparation already ran.
   */
  const prepare = async (
    input: ThreatPreparation,
  ): Promise<{ payload: AlertPayload; hits: number; read: ReadTargets }> => {
    const { event: started, canaryId } = input;
    const reading = targets.read(input.accountId);
    if (started && canaryId && input.fresh) {
      const hits = Math.max(started.hits, 1);
      const event = startedEvent({ ...input, canaryId }, started);
      const canary = { ...started.canary, createdAt: new Date(started.canary.createdAt) };
      const [payload, read] = await Promise.all([
        buildPayload(event, hits, 'canary fired', Promise.resolve(canary)),
        reading,
      ]);
      return { payload, hits, read };
    }
    const canary = canaryId ? canaries.findById(canaryId) : undefined;
    // Both are awaited below; handled here too, so that when the event read fails first
    // neither is left rejected with no handler.
    for (const read of [canary, reading]) read?.catch(() => undefined);
    const known = await threats.findEvent(input.threatEventId);
    const event = tripwireEvent(input.threatEventId, known);
    const hits = Math.max(started?.hits ?? 0, event.hitCount, 1);
    const payload = known?.alert ?? (await buildPayload(event, hits, 'canary fired', canary));
    return { payload, hits, read: await reading };
  };
  const routeOf = (payload: AlertPayload) => ({
    event: payload.event,
    level: payload.data.alertLevel,
  });

  return {
    /**
     * A threat alert's first step: prepared (see `prepare`), kept on its event while the first
     * attempts go out, and sealed in the evidence log (once per event: fixed log id) in the same
     * append as the outcomes when they are recorded here (see `FirstAttempts`), else on its own. A
     * seal that failed is left to the workflow (`sealed`: false).
     */
    async sendThreatAlert(
      input: ThreatPreparation & { workflowId: string; requestId?: string },
    ): Promise<ThreatFirstAttempts> {
      const { payload, hits, read } = await prepare(input);
      const entry = threatAlertEntry(payload, { hits });
      const [kept, sent] = await Promise.all([
        threats
          .recordAlert(input.threatEventId, payload, hits)
          .then(...succeeded('keep the alert')),
        sendFirst(
          {
            accountId: input.accountId,
            workflowId: input.workflowId,
            event: payload.event,
            threatEventId: input.threatEventId,
            payload,
            resendOf: null,
          },
          read,
          { routed: routeOf(payload), requestId: input.requestId, sealWith: [entry] },
        ),
      ]);
      const sealed =
        sent.recorded === 'outcomes' ||
        (await evidence.append(input.accountId, entry).then(...succeeded('seal the alert')));
      return { ...sent, payload, hits, sealed: kept && sealed };
    },

    /**
     * The threat alert's first step split in its parts, when that step failed: the payload and
     * its targets (see `prepare`); the workflow seals it with `sealThreatAlert` beside its delivery.
     */
    async prepareThreatDelivery(
      input: ThreatPreparation,
    ): Promise<PreparedThreat & { targets: DeliveryTarget[] }> {
      const { payload, hits, read } = await prepare(input);
      return { payload, hits, targets: read.route(routeOf(payload)) };
    },

    /**
     * A storm's count (once per quiet period): its hits so far, and how many its first alert
     * reported once that alert's round is recorded (every delivery of it with its outcome); no
     * hits once the event is removed, so no follow-up is sent.
     */
    async stormHits(threatEventId: string): Promise<StormCount> {
      const event = await threats.findEvent(threatEventId);
      if (!event) return { hits: 0, reported: 0 };
      const over = await deliveries.roundRecorded(
        event.accountId,
        threatEventId,
        `alert-${threatEventId}`,
      );
      return { hits: event.hitCount, reported: over ? (event.alertHits ?? null) : null };
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
      const payload = parseAlertPayload(input.payload);
      const { hits } = input;
      await sealThreatAlert({ evidence, threats }, input.accountId, payload, { hits }, hits);
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
      const event = tripwireEvent(
        input.threatEventId,
        await threats.findEvent(input.threatEventId),
      );
      const hits = Math.max(input.hits, event.hitCount);
      const payload = await buildPayload(event, hits, followUpSummary(input.newHits));
      await evidence.append(event.accountId, {
        logId: `evd_alert_${event.id}_follow_up`,
        kind: THREAT_ALERT_KIND,
        data: { threat_event_id: event.id, hits, follow_up: true, payload },
      });
      return payload;
    },
  };
}
