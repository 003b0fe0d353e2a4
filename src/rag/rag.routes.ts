import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { CanariesRepository } from '../canaries/canaries.repository';
import { RAG_MARKER_PATTERN, type DecoySettings } from '../canaries/decoys';
import { makeDecoy } from '../canaries/kinds';
import type { EvidenceBoundRemoval } from '../canaries/evidence-bound-removal';
import { HIT_VIAS, type ThreatsRepository } from '../canaries/threats.repository';
import { presenterOf } from '../canaries/tripwire.routes';
import type { Tripwires } from '../canaries/tripwires';
import type { Clock } from '../clock';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId, callerOf, findOwned } from '../auth/caller';
import { operationsFor } from '../http/operation';
import type { DocumentsRepository, RagDocument } from './documents.repository';

const MAX_TEXT = 1_000_000;

export const registerSchema = z
  .object({
    title: z.string().trim().min(1).max(200),
    content: z.string().min(1).max(MAX_TEXT),
  })
  .strict();

export const leakSchema = z
  .object({ text: z.string().min(1).max(MAX_TEXT), source: z.string().max(200).optional() })
  .strict();

export const deleteQuery = z.object({ force: z.enum(['true', 'false']).optional() }).strict();

export const documentView = z
  .object({
    document_id: z.string(),
    title: z.string(),
    marker: z.string(),
    canary_id: z.string(),
    content_length: z.number().int(),
    leak_count: z.number().int(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Document' });
/** Only when registered: the text to index instead of the original. */
export const registeredDocumentView = documentView
  .extend({ marked_content: z.string() })
  .meta({ id: 'RegisteredDocument' });
export const documentListView = z
  .object({ documents: z.array(documentView) })
  .meta({ id: 'DocumentList' });
export const leakListView = z
  .object({
    leaks: z.array(
      z.object({
        leak_id: z.string(),
        threat_event_id: z.string(),
        at: z.iso.datetime(),
        via: z.enum(HIT_VIAS),
        evidence: evidenceRefView,
      }),
    ),
  })
  .meta({ id: 'LeakList' });
export const leakReportView = z
  .object({ markers_found: z.array(z.string()) })
  .meta({ id: 'LeakReport' });
export const documentDeletedView = z
  .object({
    document_id: z.string(),
    deleted: z.literal(true),
    removed_leaks: z.number().int(),
  })
  .meta({ id: 'DocumentDeleted' });

/** Where the marker goes: a reference line at the end, kept by chunkers and copied with the text. */
export function markContent(content: string, marker: string): string {
  return `${content.trimEnd()}\n\n[${marker}]\n`;
}

export interface RagDeps {
  documents: DocumentsRepository;
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  tripwires: Tripwires;
  removal: EvidenceBoundRemoval;
  decoys: DecoySettings;
  clock: Clock;
  meterPlant: RequestHandler;
}

const owned = (documents: DocumentsRepository, res: Response, documentId: string) =>
  findOwned(res, documents, documentId, `document ${documentId}`);

const describe = async (
  threats: ThreatsRepository,
  document: RagDocument,
): Promise<z.output<typeof documentView>> => ({
  document_id: document.id,
  title: document.title,
  marker: document.marker,
  canary_id: document.canaryId,
  content_length: document.contentLength,
  leak_count: await threats.countHits(document.accountId, [document.canaryId]),
  created_at: document.createdAt.toISOString(),
});

const operation = operationsFor<RagDeps>('RAG');

/** `/rag` (session, or API key with rag scopes): documents whose leaks fire like canaries. */
export const ragOperations = [
  /** Registers a document: answers it with its marker embedded, to be indexed instead of the original. */
  operation({
    operationId: 'registerDocument',
    method: 'post',
    path: '/rag/documents',
    summary: 'Register a document (metered)',
    description:
      'Index `marked_content` (the text with a `[ref-…]` marker line) instead of the original.',
    auth: 'sessionOrApiKey',
    body: registerSchema,
    before: ({ meterPlant }) => [meterPlant],
    success: { status: 201, description: 'The document with `marked_content`' },
    response: registeredDocumentView,
    errors: { 402: 'Plan limit reached' },
    examples: { body: { title: 'Pricing FAQ', content: 'Our enterprise plan costs…' } },
    handler: async ({ body, res }, { documents, canaries, threats, decoys, clock }) => {
      const accountId = callerAccountId(res);
      const now = clock();
      const decoy = makeDecoy('rag_marker', decoys);
      const canary = await canaries.plant(
        { accountId, kind: 'rag_marker', memo: `rag document: ${body.title}`, platform: 'rag' },
        decoy,
        now,
      );
      const document = await documents.create(
        {
          accountId,
          title: body.title,
          canaryId: canary.id,
          marker: decoy.value,
          contentLength: body.content.length,
        },
        now,
      );
      return {
        ...(await describe(threats, document)),
        marked_content: markContent(body.content, decoy.value),
      };
    },
  }),
  operation({
    operationId: 'listDocuments',
    method: 'get',
    path: '/rag/documents',
    summary: 'Documents',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{documents}`' },
    response: documentListView,
    handler: async ({ res }, { documents, threats }) => {
      const list = await documents.list(callerAccountId(res));
      return { documents: await Promise.all(list.map((d) => describe(threats, d))) };
    },
  }),
  operation({
    operationId: 'getDocument',
    method: 'get',
    path: '/rag/documents/{document_id}',
    summary: 'One document',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The document' },
    response: documentView,
    handler: async ({ params, res }, { documents, threats }) =>
      describe(threats, await owned(documents, res, params.document_id!)),
  }),
  /** The document's leak records, each sealed in an evidence record. */
  operation({
    operationId: 'listDocumentLeaks',
    method: 'get',
    path: '/rag/documents/{document_id}/leaks',
    summary: "A document's leak records",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{leaks}`' },
    response: leakListView,
    handler: async ({ params, res }, { documents, threats }) => {
      const document = await owned(documents, res, params.document_id!);
      const hits = await threats.hitsOf(document.accountId, [document.canaryId]);
      return {
        leaks: hits.map((h) => ({
          leak_id: h.id,
          threat_event_id: h.threatEventId,
          at: h.at.toISOString(),
          via: h.source.via,
          evidence: { log_id: h.evidence.logId, content_hash: h.evidence.contentHash },
        })),
      };
    },
  }),
  /**
   * A leak report: text found somewhere (a paste site, a model's answer, a support ticket). Every
   * marker in it fires its document's canary, whoever owns it; the answer names the caller's own.
   */
  operation({
    operationId: 'reportLeak',
    method: 'post',
    path: '/rag/leaks',
    summary: 'Report text that may hold markers',
    description:
      "Every document marker in the text fires its canary (a leak record and an alert); `markers_found` names the caller's own.",
    auth: 'sessionOrApiKey',
    body: leakSchema,
    success: { status: 202, description: '`{markers_found}`' },
    response: leakReportView,
    examples: { body: { text: 'found on a paste site: …', source: 'pastebin' } },
    handler: async ({ body: { text }, req, res }, { canaries, tripwires }) => {
      const markers = [...new Set(text.match(RAG_MARKER_PATTERN) ?? [])];
      const own: string[] = [];
      for (const marker of markers) {
        const canaryId = await tripwires.recordHit({
          secrets: [marker],
          via: 'leak_report',
          ...presenterOf(req),
        });
        if (!canaryId) continue;
        if (await canaries.find(callerAccountId(res), canaryId)) own.push(marker);
      }
      return { markers_found: own };
    },
  }),
  operation({
    operationId: 'deleteDocument',
    method: 'delete',
    path: '/rag/documents/{document_id}',
    summary: 'Delete a document (force removes its leak records: session only)',
    description: 'The same rule as traps, for leak records.',
    auth: 'sessionOrApiKey',
    query: deleteQuery,
    success: { status: 200, description: '`{document_id, deleted, removed_leaks}`' },
    response: documentDeletedView,
    errors: { 409: 'Holds leak records: force=true needed' },
    handler: async ({ params, query, res }, { documents, removal }) => {
      const document = await owned(documents, res, params.document_id!);
      const { removedHits } = await removal.remove(callerOf(res), {
        accountId: document.accountId,
        canaryIds: [document.canaryId],
        label: `Document ${document.id}`,
        force: query.force === 'true',
      });
      await documents.remove(document.accountId, document.id);
      return { document_id: document.id, deleted: true as const, removed_leaks: removedHits };
    },
  }),
];
