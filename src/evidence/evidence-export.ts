import { once } from 'node:events';
import type { Request, Response } from 'express';
import type { UsersRepository } from '../accounts/users.repository';
import { AppError } from '../http/errors';
import { featureNotInPlan, planHasFeature } from '../plans';
import PDFDocument from 'pdfkit';
import { z } from 'zod';
import type { EvidenceRecord, EvidenceRepository } from './evidence.repository';
import { SEAL_ALGORITHM } from './seal';

const RECORDS_PER_CHUNK = 200;

/** Every field the content hash covers, so anyone can recompute it (see seal.ts). */
export const exportedRecordView = z.object({
  log_id: z.string(),
  seq: z.number().int(),
  kind: z.string(),
  sealed_at: z.iso.datetime(),
  prev_hash: z.string().nullable(),
  content_hash: z.string().nullable(),
  algorithm: z.literal(SEAL_ALGORITHM).nullable(),
  data: z.record(z.string(), z.unknown()),
});

/** The JSON export; streamed, so its parts are typed one by one below. */
export const evidenceExportView = z.object({
  account_id: z.string(),
  exported_at: z.iso.datetime(),
  algorithm: z.literal(SEAL_ALGORITHM),
  records: z.array(exportedRecordView),
  summary: z.object({
    count: z.number().int(),
    first_seq: z.number().int().nullable(),
    last_seq: z.number().int().nullable(),
    head_hash: z.string().nullable(),
  }),
});
type EvidenceExport = z.output<typeof evidenceExportView>;

/** One record as exported and as the console lists it. */
export function exportedRecord(record: EvidenceRecord): z.output<typeof exportedRecordView> {
  return {
    log_id: record.id,
    seq: record.seq,
    kind: record.kind,
    sealed_at: record.sealedAt.toISOString(),
    prev_hash: record.prevHash,
    content_hash: record.contentHash ?? null,
    algorithm: record.algorithm ?? null,
    data: record.data,
  };
}

async function write(res: Response, chunk: string | Buffer): Promise<void> {
  if (!res.write(chunk)) await once(res, 'drain');
}

/**
 * The whole log as one JSON document, streamed from a cursor with back-pressure, so memory stays
 * flat however long the log is. The summary comes last, once the records have been counted.
 */
export async function streamJsonExport(
  res: Response,
  evidence: EvidenceRepository,
  accountId: string,
  now: Date,
): Promise<void> {
  res.status(200).type('application/json');
  res.set('Content-Disposition', `attachment; filename="evidence-${accountId}.json"`);
  const header = {
    account_id: accountId,
    exported_at: now.toISOString(),
    algorithm: SEAL_ALGORITHM,
  } satisfies Omit<EvidenceExport, 'records' | 'summary'>;
  await write(res, `${JSON.stringify(header).slice(0, -1)},"records":[`);
  let count = 0;
  let first: EvidenceRecord | undefined;
  let last: EvidenceRecord | undefined;
  let chunk: string[] = [];
  for await (const record of evidence.streamAscending(accountId)) {
    first ??= record;
    last = record;
    chunk.push(JSON.stringify(exportedRecord(record)));
    count += 1;
    if (chunk.length === RECORDS_PER_CHUNK) {
      await write(res, (count > RECORDS_PER_CHUNK ? ',' : '') + chunk.join(','));
      chunk = [];
    }
  }
  if (chunk.length) await write(res, (count > chunk.length ? ',' : '') + chunk.join(','));
  const summary = {
    count,
    first_seq: first?.seq ?? null,
    last_seq: last?.seq ?? null,
    head_hash: last?.contentHash ?? null,
  } satisfies EvidenceExport['summary'];
  res.end(`],"summary":${JSON.stringify(summary)}}`);
}

/** The legal report: account, period, every record's time, kind and hash, and how to verify. */
export async function streamPdfExport(
  res: Response,
  evidence: EvidenceRepository,
  account: { id: string; email: string },
  now: Date,
): Promise<void> {
  const [earliest, latest] = await Promise.all([
    evidence.earliest(account.id),
    evidence.latest(account.id),
  ]);
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    info: { Title: `Evidence log of ${account.id}` },
  });
  res.status(200).type('application/pdf');
  res.set('Content-Disposition', `attachment; filename="evidence-${account.id}.pdf"`);
  doc.pipe(res);

  doc.fontSize(18).text('Sealed evidence log', { underline: false });
  doc.moveDown(0.5).fontSize(10);
  doc.text(`Account: ${account.id} (${account.email})`);
  doc.text(`Exported: ${now.toISOString()}`);
  doc.text(
    earliest && latest
      ? `Period: ${earliest.sealedAt.toISOString()} to ${latest.sealedAt.toISOString()}, sequence ${earliest.seq} to ${latest.seq}`
      : 'Period: the log has no records yet',
  );
  doc.text(`Head hash: ${latest?.contentHash ?? 'none'}`);
  doc.moveDown(0.5);
  doc
    .fontSize(9)
    .text(
      'How to verify: every record is sealed when written. Its content hash is the SHA-256 (hex) of ' +
        'the RFC 8785 canonical JSON of {v: 1, log_id, account_id, seq, kind, sealed_at, prev_hash, data}, ' +
        "and prev_hash is the previous record's content hash, so an edited, removed or reordered record " +
        'breaks the chain. Anyone can check a hash, without an account, at GET /api/verify/<hash> on this ' +
        'service; the JSON export carries every field needed to recompute the hashes independently.',
    );
  doc.moveDown();

  let written = 0;
  doc.font('Courier').fontSize(7);
  for await (const record of evidence.streamAscending(account.id)) {
    doc.text(`#${record.seq}  ${record.sealedAt.toISOString()}  ${record.kind}`);
    doc.text(`     ${record.contentHash ?? '(unsealed)'}`, { lineGap: 2 });
    if (++written % RECORDS_PER_CHUNK === 0 && res.writableNeedDrain) await once(res, 'drain');
  }
  doc.font('Helvetica').fontSize(9).moveDown().text(`${written} records listed.`);
  doc.end();
}

export interface ExportDeps {
  evidence: EvidenceRepository;
  users: UsersRepository;
  now: () => Date;
}

/** JSON on every plan; the PDF with `format=pdf` or `Accept: application/pdf`, paid plans only. */
export async function sendExport(
  req: Request,
  res: Response,
  { evidence, users, now }: ExportDeps,
  accountId: string,
  format: 'json' | 'pdf' | undefined,
): Promise<void> {
  const pdf =
    format === 'pdf' ||
    (!format && req.accepts(['application/json', 'application/pdf']) === 'application/pdf');
  if (!pdf) return streamJsonExport(res, evidence, accountId, now());
  const account = await users.findById(accountId);
  if (!account) throw new AppError(404, `No account ${accountId}`);
  if (!planHasFeature(account.plan, 'legal_pdf_export')) {
    throw new AppError(
      402,
      featureNotInPlan(account.plan, 'legal_pdf_export', 'The legal PDF export'),
    );
  }
  return streamPdfExport(res, evidence, { id: account.id, email: account.email }, now());
}
