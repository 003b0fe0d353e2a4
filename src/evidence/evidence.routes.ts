import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { z } from 'zod';
import type { UsersRepository } from '../accounts/users.repository';
import type { Clock } from '../clock';
import { callerAccountId, ownAccountOnly } from '../auth/caller';
import { operationsFor } from '../http/operation';
import {
  evidenceExportView,
  exportEvidence,
  type ExportFile,
  type ExportFormat,
} from './evidence-export';
import { refuseEvidenceDeletion } from './evidence-protection';
import type { EvidenceLog } from './evidence-log';
import type { EvidenceRepository } from './evidence.repository';
import { chainReportView, recordVerificationView, type EvidenceService } from './evidence.service';

export const exportQuery = z.object({ format: z.enum(['json', 'pdf']).optional() });

/** `format` if given, else the `Accept` header: the PDF only when it prefers PDF to JSON. */
export function exportFormat(req: Request, format: ExportFormat | undefined): ExportFormat {
  if (format) return format;
  return req.accepts(['application/json', 'application/pdf']) === 'application/pdf'
    ? 'pdf'
    : 'json';
}

export async function sendFile(res: Response, file: ExportFile): Promise<void> {
  res.status(200).type(file.contentType);
  res.set('Content-Disposition', `attachment; filename="${file.fileName}"`);
  await pipeline(file.body, res);
}

export interface EvidenceRoutesDeps {
  evidence: EvidenceRepository;
  service: EvidenceService;
  users: UsersRepository;
  log: EvidenceLog;
  clock: Clock;
}
const operation = operationsFor<EvidenceRoutesDeps>('Evidence');

/** The `/audit` product area: verify a record, export the log, check the chain (API key). */
export const evidenceOperations = [
  operation({
    operationId: 'verifyRecord',
    method: 'post',
    path: '/audit/verify/{log_id}',
    summary: 'Re-verify a sealed record',
    description:
      "Recomputes the record's hash; `inclusion` is the RFC 9162 proof against a signed checkpoint (one is signed if none covers it yet).",
    auth: 'apiKey',
    success: { status: 200, description: 'The verification' },
    response: recordVerificationView,
    handler: async ({ params, res }, { service }) =>
      service.verify(callerAccountId(res), params.log_id!),
  }),
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
    handler: async ({ query, req, res }, { evidence, users, log, clock }) => {
      const deps = { evidence, users, log, now: clock };
      const format = exportFormat(req, query.format);
      await sendFile(res, await exportEvidence(deps, callerAccountId(res), format));
    },
  }),
  operation({
    operationId: 'checkChain',
    method: 'get',
    path: '/audit/chain/{user_id}',
    summary: 'Whole-log chain check',
    description:
      'Checks the whole log up to the head read at its start; a gap a sealed `evidence.removed` record explains is in `removed_seqs`, not `missing_seqs`.',
    auth: 'apiKey',
    authorize: [ownAccountOnly],
    success: { status: 200, description: 'The check' },
    response: chainReportView,
    handler: async ({ res }, { service }) => service.checkChain(callerAccountId(res)),
  }),
  operation({
    operationId: 'deleteEvidence',
    method: 'delete',
    path: '/audit/{log_id}',
    expressPath: ['/audit/{*path}'],
    summary: 'Never allowed: no API key can delete evidence',
    description: 'No route deletes evidence at all.',
    auth: 'apiKey',
    success: { status: 403, description: 'Always refused' },
    handler: ({ res }) => refuseEvidenceDeletion(res),
  }),
];
