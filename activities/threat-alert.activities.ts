import type { Db } from 'mongodb';
import { alertPayloadSchema, type AlertPayload } from '../src/alerts/payload';
import { CanariesRepository } from '../src/canaries/canaries.repository';
import { IpEnricher, type IpEnrichment } from '../src/canaries/enrichment';
import { assessRisk, interpret } from '../src/canaries/risk';
import { ThreatsRepository } from '../src/canaries/threats.repository';
import { EvidenceStore } from '../src/evidence/evidence.store';
import type { AlertPayloadJson } from '../workflows/shared';

export const THREAT_ALERT_KIND = 'threat.alert';
const DAY_MS = 86_400_000;

export interface ThreatAlertDeps {
  db: Db;
  enricher: IpEnricher;
}

const NO_PLACE = { ip: '', country: '', city: '', org: '' };

function place({ ip, country, city, org }: IpEnrichment) {
  return { ip, country, city, org };
}

export function threatAlertActivities({ db, enricher }: ThreatAlertDeps) {
  const threats = new ThreatsRepository(db);
  const canaries = new CanariesRepository(db);
  const evidence = new EvidenceStore(db, () => new Date());

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
      const mail = event.source.mailServer;
      const looked = await enricher.enrich(mail ? mail.ip : event.source.ip);
      const attacker = mail
        ? { ...NO_PLACE, type: 'unknown', abuseScore: null }
        : { ...place(looked), type: looked.type, abuseScore: looked.abuseScore };
      const risk = assessRisk({
        kind: event.canaryKind,
        attackerType: attacker.type,
        abuseScore: attacker.abuseScore,
        hits,
        ageDays,
      });
      const payload: AlertPayload = alertPayloadSchema.parse({
        version: '1',
        event: 'canary.tripwire_triggered',
        sentAt: now.toISOString(),
        data: {
          event: 'canary.tripwire_triggered',
          alertLevel: risk.alertLevel,
          platform: event.platform,
          canaryId: event.canaryId,
          canaryAgeDays: ageDays,
          attacker,
          ...(mail && { mailServer: place(looked) }),
          riskScore: risk.riskScore,
          riskLevel: risk.riskLevel,
          interpretation: interpret({
            kind: event.canaryKind,
            plantedOn: canary?.platform ?? null,
            attackerType: attacker.type,
            sourceIp: event.source.ip,
            hits,
          }),
          threatEventId: event.id,
          triggeredAt: event.firstHitAt.toISOString(),
        },
      });
      await evidence.append(event.accountId, {
        logId: `evd_alert_${event.id}`,
        kind: THREAT_ALERT_KIND,
        data: { threat_event_id: event.id, hits, payload },
      });
      await threats.recordAlert(event.id, payload);
      return payload;
    },
  };
}
