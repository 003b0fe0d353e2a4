import type { Db } from 'mongodb';
import { tripwireAlertPayload, type AlertPayload } from '../src/alerts/payload';
import { CanariesRepository } from '../src/canaries/canaries.repository';
import { IpEnricher, type IpEnrichment } from '../src/canaries/enrichment';
import { assessRisk, interpret } from '../src/canaries/risk';
import { ThreatsRepository } from '../src/canaries/threats.repository';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import type { AlertPayloadJson } from '../workflows/shared';

export const THREAT_ALERT_KIND = 'threat.alert';
const DAY_MS = 86_400_000;

export interface ThreatAlertDeps {
  db: Db;
  /** The worker's one store, shared by every activity (one group commit per account). */
  evidence: EvidenceStore;
  enricher: IpEnricher;
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

const NO_PLACE = { ip: '', country: '', city: '', org: '' };

function place({ ip, country, city, org }: IpEnrichment) {
  return { ip, country, city, org };
}

export function threatAlertActivities({ db, evidence, enricher }: ThreatAlertDeps) {
  const threats = new ThreatsRepository(db);
  const canaries = new CanariesRepository(db);

  return {
    /**
     * Builds the v1 payload of a threat event once its hits are gathered: enrichment (failures
     * leave fields empty, never stop the alert), risk, interpretation. The payload is kept on the
     * event and sealed in the account's evidence log, once per event.
     */
    async prepareThreatAlert(input: {
      threatEventId: string;
      hits: number;
    }): Promise<AlertPayloadJson> {
      const event = await threats.findEvent(input.threatEventId);
      if (!event) throw new Error(`threat event ${input.threatEventId} not found`);
      if (event.alert) return event.alert;
      if (event.canaryKind === 'agent') throw new Error('agent alerts come with their payload');
      const canary = await canaries.findById(event.canaryId);
      const now = new Date();
      const hits = Math.max(input.hits, event.hitCount, 1);
      const ageDays = canary
        ? Math.max(
            0,
            Math.floor((event.firstHitAt.getTime() - canary.createdAt.getTime()) / DAY_MS),
          )
        : 0;
      // A decoy email's mail server and a DNS canary's resolver relay for the attacker: they are
      // enriched and shown as such, and the attacker's own fields stay empty.
      const mail = event.source.mailServer;
      const resolver = event.source.resolver;
      const relayIp = mail?.ip ?? resolver?.ip;
      const looked = await enricher.enrich(relayIp ?? event.source.ip);
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
      const payload = tripwireAlertPayload(now, {
        alertLevel: risk.alertLevel,
        platform: event.platform,
        memo: canary?.memo ?? '',
        canaryKind: event.canaryKind,
        summary: 'canary fired',
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
      await sealThreatAlert({ evidence, threats }, event.accountId, payload, { hits });
      return payload;
    },
  };
}
