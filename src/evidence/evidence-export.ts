import { once } from 'node:events';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { UsersRepository } from '../accounts/users.repository';
import { AppError } from '../http/errors';
import { monthWindow, utcDate } from '../metering/windows';
import { featureNotInPlan, planHasFeature } from '../plans';
import { cutLog, cutRecords, cutRecordView, type Cut, type CutRecord } from './evidence-cut';
import { LEAF_RULE, type EvidenceLog } from './evidence-log';
import { streamPdfExport } from './evidence-pdf';
import type { EvidenceRepository } from './evidence.repository';
import { SEAL_ALGORITHM } from './seal';
import { verifierKey } from './signed-note';

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

async function write(res: Response, chunk: string | Buffer): Promise<void> {
  if (!res.write(chunk)) await once(res, 'drain');
}

export interface ExportDeps {
  evidence: EvidenceRepository;
  log: EvidenceLog;
  users: UsersRepository;
  now: () => Date;
}

/**
 * The log up to its cut as one JSON document, streamed from a cursor with back-pressure, so memory
 * stays flat however long the log is. The summary comes last, once the records have been counted.
 */
export async function streamJsonExport(
  res: Response,
  deps: ExportDeps,
  accountId: string,
): Promise<void> {
  const cut = await cutLog(deps, accountId);
  res.status(200).type('application/json');
  res.set('Content-Disposition', `attachment; filename="evidence-${accountId}.json"`);
  const { signer } = deps.log.checkpoints;
  const header = {
    account_id: accountId,
    exported_at: deps.now().toISOString(),
    algorithm: SEAL_ALGORITHM,
    log: { origin: signer.name, vkey: verifierKey(signer), leaf_rule: LEAF_RULE },
    cut: describeCut(cut),
  } satisfies Omit<EvidenceExport, 'records' | 'summary'>;
  await write(res, `${JSON.stringify(header).slice(0, -1)},"records":[`);
  let count = 0;
  let first: CutRecord | undefined;
  let last: CutRecord | undefined;
  for await (const chunk of cutRecords(deps, cut)) {
    first ??= chunk[0];
    last = chunk.at(-1);
    await write(res, (count ? ',' : '') + chunk.map((r) => JSON.stringify(r)).join(','));
    count += chunk.length;
  }
  const summary = {
    count,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    head_hash: last?.content_hash ?? null,
  } satisfies EvidenceExport['summary'];
  res.end(`],"summary":${JSON.stringify(summary)}}`);
}

/** JSON on every plan; the PDF with `format=pdf` or `Accept: application/pdf`, paid plans only. */
export async function sendExport(
  req: Request,
  res: Response,
  deps: ExportDeps,
  accountId: string,
  format: 'json' | 'pdf' | undefined,
): Promise<void> {
  const pdf =
    format === 'pdf' ||
    (!format && req.accepts(['application/json', 'application/pdf']) === 'application/pdf');
  if (!pdf) return streamJsonExport(res, deps, accountId);
  const account = await deps.users.findById(accountId);
  if (!account) throw new AppError(404, `No account ${accountId}`);
  if (!planHasFeature(account.plan, 'legal_pdf_export')) {
    // A feature, not a count: the plan's monthly allowance is 0, so used is 0 and it "resets"
    // like every monthly quota (the spec's 402 carries both), though only a plan change opens it.
    throw new AppError(402, {
      ...featureNotInPlan(account.plan, 'legal_pdf_export', 'The legal PDF export'),
      used: 0,
      resets_at: utcDate(monthWindow(deps.now()).resetsAt),
    });
  }
  return streamPdfExport(res, deps, { id: account.id, email: account.email });
}
