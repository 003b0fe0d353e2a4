import { Router, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import type { CanariesRepository } from '../canaries/canaries.repository';
import { makeDecoy, RAG_MARKER_PATTERN, type DecoySettings } from '../canaries/decoys';
import type { EvidenceBoundRemoval } from '../canaries/evidence-bound-removal';
import { HIT_VIAS, type ThreatsRepository } from '../canaries/threats.repository';
import { presenterOf } from '../canaries/tripwire.routes';
import type { Tripwires } from '../canaries/tripwires';
import type { Clock } from '../clock';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId, ownedByCaller } from '../http/caller';
import { parseQuery, validateBody } from '../http/validate';
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

export const documentView = z.object({
  document_id: z.string(),
  title: z.string(),
  marker: z.string(),
  canary_id: z.string(),
  content_length: z.number().int(),
  leak_count: z.number().int(),
  created_at: z.iso.datetime(),
});
/** Only when registered: the text to index instead of the original. */
export const registeredDocumentView = documentView.extend({ marked_content: z.string() });
export const documentListView = z.object({ documents: z.array(documentView) });
export const leakListView = z.object({
  leaks: z.array(
    z.object({
      leak_id: z.string(),
      threat_event_id: z.string(),
      at: z.iso.datetime(),
      via: z.enum(HIT_VIAS),
      evidence: evidenceRefView,
    }),
  ),
});
export const leakReportView = z.object({ markers_found: z.array(z.string()) });
export const documentDeletedView = z.object({
  document_id: z.string(),
  deleted: z.literal(true),
  removed_leaks: z.number().int(),
});

/** Where the marker goes: a reference line at the end, kept by chunkers and copied with the text. */
export function markContent(content: string, marker: string): string {
  return `${content.trimEnd()}\n\n[${marker}]\n`;
}

interface RagDeps {
  documents: DocumentsRepository;
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  tripwires: Tripwires;
  removal: EvidenceBoundRemoval;
  decoys: DecoySettings;
  clock: Clock;
  meterPlant: RequestHandler;
}

/** `/rag` (session, or API key with rag scopes): documents whose leaks fire like canaries. */
export function ragRoutes(deps: RagDeps): Router {
  const { documents, canaries, threats, tripwires, removal, decoys, clock, meterPlant } = deps;
  const router = Router();

  const owned = async (res: Response, documentId: string) =>
    ownedByCaller(res, await documents.findById(documentId), `document ${documentId}`);

  const describe = async (document: RagDocument): Promise<z.output<typeof documentView>> => ({
    document_id: document.id,
    title: document.title,
    marker: document.marker,
    canary_id: document.canaryId,
    content_length: document.contentLength,
    leak_count: await threats.countHits(document.accountId, [document.canaryId]),
    created_at: document.createdAt.toISOString(),
  });

  /** Registers a document: answers it with its marker embedded, to be indexed instead of the original. */
  router.post('/documents', validateBody(registerSchema), meterPlant, async (req, res) => {
    const body = req.body as z.infer<typeof registerSchema>;
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
    res.status(201).json({
      ...(await describe(document)),
      marked_content: markContent(body.content, decoy.value),
    } satisfies z.output<typeof registeredDocumentView>);
  });

  router.get('/documents', async (_req, res) => {
    const list = await documents.list(callerAccountId(res));
    res.json({
      documents: await Promise.all(list.map(describe)),
    } satisfies z.output<typeof documentListView>);
  });

  router.get('/documents/:document_id', async (req, res) => {
    res.json(await describe(await owned(res, req.params.document_id)));
  });

  /** The document's leak records: each a sealed evidence record. */
  router.get('/documents/:document_id/leaks', async (req, res) => {
    const document = await owned(res, req.params.document_id);
    const hits = await threats.hitsOf(document.accountId, [document.canaryId]);
    res.json({
      leaks: hits.map((h) => ({
        leak_id: h.id,
        threat_event_id: h.threatEventId,
        at: h.at.toISOString(),
        via: h.source.via,
        evidence: { log_id: h.evidence.logId, content_hash: h.evidence.contentHash },
      })),
    } satisfies z.output<typeof leakListView>);
  });

  /**
   * A leak report: text found somewhere (a paste site, a model's answer, a support ticket). Every
   * marker in it fires its document's canary, whoever owns it; the answer names the caller's own.
   */
  router.post('/leaks', validateBody(leakSchema), async (req, res) => {
    const { text } = req.body as z.infer<typeof leakSchema>;
    const markers = [...new Set(text.match(RAG_MARKER_PATTERN) ?? [])];
    const own: string[] = [];
    for (const marker of markers) {
      const canaryId = await tripwires.recordHit({
        secrets: [marker],
        via: 'leak_report',
        ...presenterOf(req),
      });
      if (!canaryId) continue;
      const canary = await canaries.findById(canaryId);
      if (canary?.accountId === callerAccountId(res)) own.push(marker);
    }
    res.status(202).json({ markers_found: own } satisfies z.output<typeof leakReportView>);
  });

  router.delete('/documents/:document_id', async (req, res) => {
    const { force } = parseQuery(deleteQuery, req.query);
    const document = await owned(res, req.params.document_id);
    const { removedEvidence } = await removal.remove(res, {
      accountId: document.accountId,
      canaryIds: [document.canaryId],
      label: `Document ${document.id}`,
      force: force === 'true',
    });
    await documents.remove(document.id);
    res.json({
      document_id: document.id,
      deleted: true,
      removed_leaks: removedEvidence,
    } satisfies z.output<typeof documentDeletedView>);
  });

  return router;
}
