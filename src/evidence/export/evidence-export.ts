import { Readable } from 'node:stream';
import { z } from 'zod';
import type { UsersRepository } from '../../accounts/users.repository';
import { DomainError } from '../../errors';
import { monthWindow, utcDate } from '../../metering/windows';
import { featureNotInPlan, planHasFeature, type Plans } from '../../plans';
import { cutLog, cutRecords, cutRecordView, type Cut, type CutRecord } from './evidence-cut';
import { LEAF_RULE, type EvidenceLog } from '../log/evidence-log';
import { pdfExport } from './evidence-pdf';
import type { EvidenceRepository } from '../evidence.repository';
import { SEAL_ALGORITHM } from '../seal';
import { verifierKey } from '../log/signed-note';

export const cutView = z.object({
  head: z.object({ seq: z.number().int(), content_hash: z.string() }).nullable(),
  checkpoint: z
    .object({ size: z.number().int(), root_hash: z.string(), note: z.string() })
    .nullable(),
});

/** The JSON export: streamed, so its parts are typed one by one below. */
export const evidenceExportView = z
  .object({
    account_id: z.string(),
    exported_at: z.iso.datetime(),
    algorithm: z.literal(SEAL_ALGORITHM),
    /** For reference only: a verifier takes the public key from the operator, not from here. */
    log: z.object({ origin: z.string(), vkey: z.string(), leaf_rule: z.string() }),
    cut: cutView,
    records: z.array(cutRecordView),
    summary: z.object({
      count: z.number().int(),
      first_seq: z.number().int().nullable(),
      last_seq: z.number().int().nullable(),
      head_hash: z.string().nullable(),
    }),
  })
  .meta({ id: 'EvidenceExport' });
export type EvidenceExport = z.output<typeof evidenceExportView>;

export function describeCut(cut: Cut): z.output<typeof cutView> {
  return {
    head: cut.head && { seq: cut.head.seq, content_hash: cut.head.hash },
    checkpoint: cut.checkpoint && {
      size: cut.checkpoint._id,
      root_hash: cut.checkpoint.rootHash,
      note: cut.checkpoint.note,
    },
  };
}

/** A file for the route to send: its media type, its name, and its bytes as they are made. */
export interface ExportFile {
  contentType: string;
  fileName: string;
  body: Readable;
}

export type ExportFormat = 'json' | 'pdf';

export interface ExportDeps {
  evidence: EvidenceRepository;
  log: EvidenceLog;
  users: UsersRepository;
  plans: Plans;
  now: () => Date;
}

/**
 * The log up to its cut as one JSON document, streamed from a cursor as the reader takes it, so
 * memory stays flat however long the log is. The summary comes last, once the records are counted.
 */
async function jsonExport(deps: ExportDeps, accountId: string): Promise<ExportFile> {
  const cut = await cutLog(deps, accountId);
  const { signer } = deps.log.checkpoints;
  const header = {
    account_id: accountId,
    exported_at: deps.now().toISOString(),
    algorithm: SEAL_ALGORITHM,
    log: { origin: signer.name, vkey: verifierKey(signer), leaf_rule: LEAF_RULE },
    cut: describeCut(cut),
  } satisfies Omit<EvidenceExport, 'records' | 'summary'>;
  return {
    contentType: 'application/json',
    fileName: `evidence-${accountId}.json`,
    body: Readable.from(jsonDocument(deps, cut, header)),
  };
}

async function* jsonDocument(
  deps: ExportDeps,
  cut: Cut,
  header: Omit<EvidenceExport, 'records' | 'summary'>,
): AsyncGenerator<string> {
  yield `${JSON.stringify(header).slice(0, -1)},"records":[`;
  let count = 0;
  let first: CutRecord | undefined;
  let last: CutRecord | undefined;
  for await (const chunk of cutRecords(deps, cut)) {
    first ??= chunk[0];
    last = chunk.at(-1);
    yield (count ? ',' : '') + chunk.map((r) => JSON.stringify(r)).join(',');
    count += chunk.length;
  }
  const summary = {
    count,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    head_hash: last?.content_hash ?? null,
  } satisfies EvidenceExport['summary'];
  yield `],"summary":${JSON.stringify(summary)}}`;
}

/** JSON on every plan; the legal PDF on the plans the operator gives it (paid ones by default). */
export async function exportEvidence(
  deps: ExportDeps,
  accountId: string,
  format: ExportFormat,
): Promise<ExportFile> {
  if (format === 'json') return jsonExport(deps, accountId);
  const account = await deps.users.findById(accountId);
  if (!account) throw new DomainError('not_found', `No account ${accountId}`);
  if (!planHasFeature(deps.plans, account.plan, 'legal_pdf_export')) {
    // A feature, not a count: the plan's monthly allowance is 0, so used is 0 and it "resets"
    // like every monthly quota (the spec's 402 carries both), though only a plan change opens it.
    throw new DomainError('quota_exceeded', {
      ...featureNotInPlan(deps.plans, account.plan, 'legal_pdf_export', 'The legal PDF export'),
      used: 0,
      resets_at: utcDate(monthWindow(deps.now()).resetsAt),
    });
  }
  return pdfExport(deps, { id: account.id, email: account.email });
}
