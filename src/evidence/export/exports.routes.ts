import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { callerAccountId, ownAccountOnly } from '../../auth/caller';
import { sessionOf } from '../../auth/session-auth';
import { operationsFor } from '../../http/operation';
import {
  evidenceExportView,
  exportEvidence,
  type ExportDeps,
  type ExportFile,
  type ExportFormat,
} from './evidence-export';

const exportQuery = z.object({ format: z.enum(['json', 'pdf']).optional() });

/** `format` if given, else the `Accept` header: the PDF only when it prefers PDF to JSON. */
function askedFormat(req: Request, format: ExportFormat | undefined): ExportFormat {
  if (format) return format;
  return req.accepts(['application/json', 'application/pdf']) === 'application/pdf'
    ? 'pdf'
    : 'json';
}

async function send(res: Response, file: ExportFile): Promise<void> {
  res.status(200).type(file.contentType);
  res.set('Content-Disposition', `attachment; filename="${file.fileName}"`);
  await pipeline(file.body, res);
}

const operation = operationsFor<ExportDeps>('Evidence');

/** The sealed log as one file, JSON or the legal PDF: API key under /audit, session under /api/audit. */
export const exportsOperations = [
  operation({
    operationId: 'exportEvidence',
    method: 'get',
    path: '/audit/export/{user_id}',
    summary: 'Export the sealed log (JSON or PDF)',
    description:
      'The log cut at its chain head, streamed as JSON. `format=pdf` or `Accept: application/pdf`: the legal PDF, Pro and Enterprise only (Free: 402, metric `legal_pdf_export`).',
    auth: 'apiKey',
    query: exportQuery,
    authorize: [ownAccountOnly],
    success: { status: 200, description: 'The log' },
    response: evidenceExportView,
    errors: { 402: 'PDF needs a paid plan' },
    handler: async ({ query, req, res }, deps) => {
      const format = askedFormat(req, query.format);
      await send(res, await exportEvidence(deps, callerAccountId(res), format));
    },
  }),
  operation({
    operationId: 'exportEvidenceFromConsole',
    method: 'get',
    path: '/api/audit/export',
    summary: 'Export the sealed log, JSON or PDF (console)',
    auth: 'session',
    query: exportQuery,
    success: { status: 200, description: 'The log' },
    response: evidenceExportView,
    errors: { 402: 'PDF needs a paid plan' },
    handler: async ({ query, req, res }, deps) => {
      const format = askedFormat(req, query.format);
      await send(res, await exportEvidence(deps, sessionOf(res).userId, format));
    },
  }),
];
