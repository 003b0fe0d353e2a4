import { PassThrough, type Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { cutLog, cutRecords, type Cut, type CutRecord } from './evidence-cut';
import type { ExportDeps, ExportFile } from './evidence-export';
import { describeCut } from './evidence-export';
import { ExportVerifier, type Verdict } from './export-verifier';
import { fingerprint, verifierKey } from '../log/signed-note';
import { withOpenings } from '../personal-fields';
import type { JsonObject } from '../seal';

const MARGIN = 50;
const PAGE = { width: 595.28, height: 841.89 };
const RECORDS_PER_PAGE = 18;
const RECORD_HEIGHT = 38;
/** Courier is monospaced (0.6 em a character), so lines are cut to fit rather than wrapped. */
const MONO_SIZE = 7;
const LINE_CHARS = Math.floor((PAGE.width - 2 * MARGIN) / (0.6 * MONO_SIZE));

const fit = (text: string, chars = LINE_CHARS) =>
  text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A record's data as `field: value` pairs, nested fields by path and a list's objects in
 * parentheses (the hits a `threat.hit` record lists): readable without JSON.
 */
export function summarize(data: Record<string, unknown>, prefix = ''): string {
  const item = (value: unknown) => (isObject(value) ? `(${summarize(value)})` : String(value));
  return Object.entries(data)
    .map(([key, value]) =>
      isObject(value)
        ? summarize(value, `${prefix}${key}.`)
        : `${prefix}${key}: ${Array.isArray(value) ? value.map(item).join(', ') : String(value)}`,
    )
    .join('; ');
}

/**
 * The legal report of one cut of the log: a first page with the issuer, generation time, the
 * signed checkpoint and key fingerprint, the verification result (the offline verifier's own check,
 * run over the cut with this server's public key) and how a third party checks it; then every
 * record's time, kind, content hash, Merkle leaf and a summary of its content, at a fixed number
 * per page so that "page n of N" is known before the records stream.
 */
export async function pdfExport(
  deps: ExportDeps,
  account: { id: string; email: string },
): Promise<ExportFile> {
  const cut = await cutLog(deps, account.id);
  const { signer } = deps.log.checkpoints;
  const verifier = new ExportVerifier({ account_id: account.id, cut: describeCut(cut) }, [signer]);
  let first: CutRecord | undefined;
  let last: CutRecord | undefined;
  for await (const chunk of cutRecords(deps, cut)) {
    first ??= chunk[0];
    last = chunk.at(-1);
    chunk.forEach((r) => verifier.add(r));
  }
  const verdict = verifier.finish();
  const pages = 1 + Math.ceil(verdict.records / RECORDS_PER_PAGE);
  const issuer = `Evidence log ${signer.name}`;
  const generated = deps.now().toISOString();

  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: `Evidence log of ${account.id}`, Author: issuer, Subject: 'Sealed evidence' },
  });
  const body = new PassThrough();
  doc.pipe(body);
  const footer = (page: number) => {
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0; // writing below the margin must not start a new page
    doc.font('Helvetica').fontSize(8).fillColor('#444');
    doc.text(
      `${issuer} · account ${account.id} · generated ${generated} · Page ${page} of ${pages}`,
      MARGIN,
      PAGE.height - 35,
      { width: PAGE.width - 2 * MARGIN, align: 'center', lineBreak: false },
    );
    doc.fillColor('black');
    doc.page.margins.bottom = bottom;
  };

  coverPage(doc, {
    account,
    issuer,
    generated,
    verdict,
    cut: describeCut(cut),
    first,
    last,
    signer,
  });
  footer(1);
  // Laid out while the reader takes the pages; a failure ends the stream with the error.
  void layOutRecords(deps, cut, { doc, body, footer }).catch((err: unknown) =>
    body.destroy(err as Error),
  );
  return { contentType: 'application/pdf', fileName: `evidence-${account.id}.pdf`, body };
}

interface Layout {
  doc: PDFKit.PDFDocument;
  body: Writable;
  footer: (page: number) => void;
}

/** The record pages, paced by the reader: a page chunk waits until the last one was taken. */
async function layOutRecords(deps: ExportDeps, cut: Cut, l: Layout): Promise<void> {
  let onPage = 0;
  let page = 1;
  // The second pass only lays records out: their proofs were checked in the first.
  for await (const chunk of cutRecords(deps, cut, { withProofs: false })) {
    for (const record of chunk) {
      if (onPage % RECORDS_PER_PAGE === 0) {
        l.doc.addPage();
        page += 1;
        l.footer(page);
        l.doc.font('Helvetica-Bold').fontSize(10).text('Records, oldest first', MARGIN, MARGIN);
      }
      recordBlock(l.doc, record, MARGIN + 18 + (onPage % RECORDS_PER_PAGE) * RECORD_HEIGHT);
      onPage += 1;
    }
    if (l.body.writableNeedDrain) await drainedOrClosed(l.body);
    if (l.body.destroyed) return; // the reader went away: nobody takes the rest
  }
  l.doc.end();
}

function drainedOrClosed(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('close', done);
  });
}

function recordBlock(doc: PDFKit.PDFDocument, r: CutRecord, y: number): void {
  const leaf = r.leaf_index === null ? 'not in the log' : `leaf ${r.leaf_index}`;
  doc.font('Courier-Bold').fontSize(MONO_SIZE + 0.5);
  doc.text(fit(`#${r.seq}  ${r.sealed_at}  ${r.kind}  (${leaf})`), MARGIN, y, { lineBreak: false });
  doc.font('Courier').fontSize(MONO_SIZE);
  doc.text(`content hash ${r.content_hash ?? '(unsealed)'}`, MARGIN, y + 10, { lineBreak: false });
  const summary = summarize(withOpenings(r.data as JsonObject, r.personal));
  doc.text(fit(summary), MARGIN, y + 18, { lineBreak: false });
  if (summary.length > LINE_CHARS) {
    doc.text(fit(summary.slice(LINE_CHARS - 1)), MARGIN, y + 26, { lineBreak: false });
  }
}

interface Cover {
  account: { id: string; email: string };
  issuer: string;
  generated: string;
  verdict: Verdict;
  cut: ReturnType<typeof describeCut>;
  first: CutRecord | undefined;
  last: CutRecord | undefined;
  signer: ExportDeps['log']['checkpoints']['signer'];
}

function coverPage(doc: PDFKit.PDFDocument, c: Cover): void {
  const heading = (text: string) =>
    doc.moveDown(0.8).font('Helvetica-Bold').fontSize(11).text(text).font('Helvetica').fontSize(9);
  doc.font('Helvetica-Bold').fontSize(18).text('Sealed evidence log: legal export');
  doc.font('Helvetica').fontSize(9).moveDown(0.5);
  doc.text(`Issuer: ${c.issuer}`);
  doc.text(`Generated: ${c.generated}`);
  doc.text(`Account: ${c.account.id} (${c.account.email})`);
  doc.text(
    c.cut.head && c.first && c.last
      ? `Cut at: sequence ${c.cut.head.seq}, head hash ${c.cut.head.content_hash}; ${c.verdict.records} records sealed ${c.first.sealed_at} to ${c.last.sealed_at}. Records sealed after the cut are not part of this export.`
      : 'Cut at: the log has no records yet',
  );

  heading('Verification result');
  doc.font('Helvetica-Bold').fillColor(c.verdict.ok ? '#0a6b2a' : '#a00000');
  doc.text(c.verdict.line).fillColor('black').font('Helvetica');
  const removed = c.verdict.chain?.removed_seqs ?? [];
  if (removed.length) {
    doc.text(
      `Explained gaps: ${removed.map((r) => `seq ${r.from}–${r.to} (removal sealed in ${r.removed_by})`).join('; ')}. A console user force-deleted these records; the removal itself is sealed in the log.`,
    );
  }

  heading('Signed checkpoint');
  doc.text(
    c.cut.checkpoint
      ? `Merkle tree size ${c.cut.checkpoint.size}, root hash ${c.cut.checkpoint.root_hash}, signed with Ed25519 key ${c.signer.name} (key id ${c.signer.keyId.toString('hex')}, SHA-256 fingerprint ${fingerprint(c.signer)}).`
      : 'No checkpoint has been signed yet.',
  );
  if (c.cut.checkpoint) {
    doc.moveDown(0.3).font('Courier').fontSize(7).text(c.cut.checkpoint.note.trimEnd());
    doc
      .font('Helvetica')
      .fontSize(9)
      .moveDown(0.3)
      .text(`Public key (verifier key): ${verifierKey(c.signer)}`);
  }

  heading('How a third party verifies this log');
  doc.list(
    [
      'Obtain the public key from the operator through a channel other than this document, and compare its fingerprint with the one above.',
      "Obtain the JSON export of the same cut (GET /audit/export/<account> or the console), which carries every field listed here and each record's inclusion proof.",
      "Run the offline verifier from the service's repository: npm run verify-evidence -- export.json --public-key <key>. It trusts nothing but the key: it checks the checkpoint signature, recomputes every content hash (SHA-256 of the RFC 8785 canonical JSON of {v, log_id, account_id, seq, kind, sealed_at, prev_hash, data}), walks the chain, accounts for sealed removals, and checks each record's RFC 9162 inclusion proof against the signed root.",
      'To show the log was not rewritten since an earlier checkpoint you kept, add --earlier-checkpoint <file> --consistency <proof>, the proof taken from GET /api/log/consistency?from=<earlier size>&to=<size above>.',
      'Any single record can also be checked without an account at GET /api/verify/<content hash>.',
    ],
    { bulletRadius: 1.5, paragraphGap: 2 },
  );
}
