import { createHash } from 'node:crypto';
import { z } from 'zod';
import { emailToken, RAG_MARKER_PATTERN, urlToken } from '../canaries/decoys';
import type { Presenter, Tripwires } from '../canaries/tripwires';
import type { EvidenceRepository } from '../evidence/evidence.repository';
import { sealedRefView } from '../evidence/evidence.service';
import type { EvidenceStore } from '../evidence/evidence.store';
import type { EvidenceLog } from '../evidence/log/evidence-log';
import { credentialCandidates, inspectMessage, type Finding, type Inspection } from './inspect';

export const SHIELD_INSPECTION_KIND = 'shield.inspection';

/** Point reads per message at most: a message stuffed with key-like strings costs no more. */
const MAX_CANARY_CHECKS = 20;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const TRIPWIRE_PATH = /\/r\/([A-Za-z0-9_-]{16,64})(?:[?#]|$)/;

/** How a candidate string is stored as a canary token (URLs and addresses carry a prefix). */
function asToken(text: string): string {
  const path = TRIPWIRE_PATH.exec(text);
  if (path) return urlToken(path[1]!);
  return EMAIL.test(text) ? emailToken(text) : text;
}

const verdictView = z.enum(['allow', 'flag', 'block']);
const findingFields = {
  rule: z.string(),
  category: z.enum(['prompt_injection', 'jailbreak', 'secret', 'exfiltration']),
  severity: z.enum(['low', 'medium', 'high', 'critical']),
};

/** The inspection as answered (the route adds `user_id`): spans index the original message. */
export const inspectionResultView = z.object({
  verdict: verdictView,
  score: z.number().int(),
  findings: z.array(
    z.object({
      ...findingFields,
      span: z.object({ start: z.number().int(), end: z.number().int(), text: z.string() }),
    }),
  ),
  evidence: sealedRefView,
});
type InspectionResult = z.output<typeof inspectionResultView>;

/** What an inspection seals: the message's hash and length, and spans without their text. */
const sealedInspectionData = z.object({
  user_id: z.string(),
  message_sha256: z.string(),
  message_length: z.number().int(),
  verdict: verdictView,
  score: z.number().int(),
  findings: z.array(z.object({ ...findingFields, start: z.number().int(), end: z.number().int() })),
});

/** One entry of the history: the sealed record, never the message. */
export const inspectionRecordView = sealedInspectionData.extend({
  log_id: z.string(),
  seq: z.number().int(),
  inspected_at: z.iso.datetime(),
  content_hash: z.string().optional(),
});
export const inspectionHistoryView = z
  .object({
    inspections: z.array(inspectionRecordView),
    next_cursor: z.string().nullable(),
    /** Deprecated: the `seq` for `before`; use `next_cursor`. */
    next_before: z.number().int().nullable().meta({ deprecated: true }),
  })
  .meta({ id: 'InspectionPage' });

/**
 * `/shield/inspect` behind the route: the shipped rules, then the account's tripwires (a planted
 * credential or a rag document marker in a message is a leak: it fires like any canary and blocks
 * the message), then a sealed record of the inspection. The message itself is not stored, only its
 * SHA-256 and the findings' positions.
 */
export class ShieldInspector {
  constructor(
    private readonly deps: {
      tripwires: Tripwires;
      store: EvidenceStore;
      evidence: EvidenceRepository;
      log: Pick<EvidenceLog, 'promise'>;
    },
  ) {}

  async inspect(presenter: Presenter, accountId: string, userId: string, message: string) {
    const inspection = inspectMessage(message);
    const leaks = await this.canaryLeaks(presenter, message);
    const findings = [...leaks, ...inspection.findings];
    const result: Inspection = leaks.length
      ? { verdict: 'block', score: 100, findings }
      : inspection;
    const record = await this.deps.store.append(accountId, {
      kind: SHIELD_INSPECTION_KIND,
      data: {
        user_id: userId,
        message_sha256: createHash('sha256').update(message).digest('hex'),
        message_length: message.length,
        verdict: result.verdict,
        score: result.score,
        findings: result.findings.map(({ rule, category, severity, span }) => ({
          rule,
          category,
          severity,
          start: span.start,
          end: span.end,
        })),
      } satisfies z.output<typeof sealedInspectionData>,
    });
    return {
      ...result,
      evidence: {
        log_id: record.id,
        content_hash: record.contentHash!,
        promise: this.deps.log.promise(record, record.leafIndex!),
      },
    } satisfies InspectionResult;
  }

  /** Every canary in the message fires (whoever planted it); each is a critical finding. */
  private async canaryLeaks(presenter: Presenter, message: string): Promise<Finding[]> {
    const markers = [...message.matchAll(RAG_MARKER_PATTERN)].map((m) => ({
      text: m[0],
      start: m.index,
      end: m.index + m[0].length,
    }));
    const byToken = new Map(
      [...markers, ...credentialCandidates(message)].map((c) => [asToken(c.text), c] as const),
    );
    const candidates = [...byToken].slice(0, MAX_CANARY_CHECKS);
    const found = await Promise.all(
      candidates.map(async ([token, c]) => ({
        c,
        canaryId: await this.deps.tripwires.recordHit({
          secrets: [token],
          via: 'shield',
          ...presenter,
        }),
      })),
    );
    const leaks: Finding[] = [];
    for (const { c, canaryId } of found) {
      if (!canaryId) continue;
      leaks.push({
        rule: 'canary.leak',
        category: 'secret',
        severity: 'critical',
        span: { start: c.start, end: c.end, text: c.text },
      });
    }
    return leaks;
  }

  /** The account's inspections, newest first, and the `seq` to continue below (null at the end). */
  async history(
    accountId: string,
    limit: number,
    beforeSeq?: number,
  ): Promise<{ inspections: z.output<typeof inspectionRecordView>[]; nextBefore: number | null }> {
    const { records, nextBefore } = await this.deps.evidence.pageNewestFirst(accountId, {
      kinds: [SHIELD_INSPECTION_KIND],
      limit,
      beforeSeq,
    });
    return {
      // Read back as sealed by `inspect` above.
      inspections: records.map((r) => ({
        log_id: r.id,
        seq: r.seq,
        inspected_at: r.sealedAt.toISOString(),
        content_hash: r.contentHash,
        ...(r.data as z.output<typeof sealedInspectionData>),
      })),
      nextBefore,
    };
  }
}
