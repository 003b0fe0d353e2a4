import type { Clock } from '../clock';
import { callerAccountId } from '../auth/caller';
import { sessionOf } from '../auth/session-auth';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { z } from 'zod';
import { SECTION_NAMES, type PrivacyExport } from './privacy-export';
import { erasureView, type PrivacyErasure } from './privacy-erase';
import type { RequestHandler } from 'express';

const storedRecord = z.record(z.string(), z.unknown());

/** The archive as written: stored records, as they are held, under each section's name. */
const archiveView = z
  .object({
    format: z.string(),
    exported_at: z.iso.datetime(),
    account: storedRecord,
    ...Object.fromEntries(SECTION_NAMES.map((name) => [name, z.array(storedRecord)])),
  })
  .meta({ id: 'PrivacyArchive' });

export interface PrivacyDeps {
  exporter: PrivacyExport;
  erasure: PrivacyErasure;
  clock: Clock;
}

/** What the caller types to show they mean it (besides the password). */
export const ERASE_CONFIRMATION = 'erase my account';

const eraseBody = z.strictObject({
  password: z.string().min(1).max(256),
  confirm: z.literal(ERASE_CONFIRMATION, {
    error: `must be exactly "${ERASE_CONFIRMATION}"`,
  }),
});

/** Erasure takes a person's password in a signed-in console session, never a key. */
const sessionOnly: RequestHandler = (_req, res, next) => {
  if (res.locals.apiKey) {
    throw new DomainError(
      'forbidden',
      'Erasing an account needs a signed-in console session and its password: no API key can erase it, whatever its scopes',
    );
  }
  next();
};
const operation = operationsFor<PrivacyDeps>('Privacy');

export const privacyOperations = [
  operation({
    operationId: 'exportPrivacyArchive',
    method: 'get',
    path: '/api/privacy/export',
    summary: 'Everything held about the caller, as one JSON archive',
    description:
      'Streamed: the account (without its password hash), API keys (metadata, without their secret digests), canaries, threat events, hits, alert channels (without secrets), deliveries, agents, traps, documents and every sealed evidence record, each section in stored field names. A failure part-way ends the connection, so a cut archive is never mistaken for a whole one (it is not valid JSON).',
    auth: 'sessionOrApiKey',
    success: {
      status: 200,
      description: '`{format, exported_at, account, api_keys, canaries, …, evidence}`',
      contentType: 'application/json',
    },
    response: archiveView,
    handler: async ({ res }, { exporter, clock }) => {
      const now = clock();
      res.status(200);
      res.type('application/json');
      res.setHeader(
        'Content-Disposition',
        `attachment; filename="privacy-export-${now.toISOString().slice(0, 10)}.json"`,
      );
      try {
        const found = await exporter.write(callerAccountId(res), now, res);
        if (!found)
          throw new DomainError('unauthenticated', 'The account of this caller no longer exists');
      } catch (err) {
        if (!res.headersSent) throw err;
        res.destroy(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      res.end();
    },
  }),
  operation({
    operationId: 'eraseAccount',
    method: 'post',
    path: '/api/privacy/erase',
    summary:
      "Erase the caller's account and personal data (crypto-shredding; the log still verifies)",
    description: `Session only, with the account password and \`confirm: "${ERASE_CONFIRMATION}"\`. Every session and key ends; the account's data key is destroyed, so every personal value sealed in its evidence (hit sources, delivery errors, its operator email in others' logs) becomes unreadable, while every content hash, chain link, Merkle proof and signed promise still verifies (docs/evidence.md); its canaries, events, hits, channels, deliveries, agents, traps, documents and the account itself are deleted. Records sealed before personal values were sealed as digests are removed under a sealed removal record. Idempotent: a crash part-way is finished by the next start.`,
    auth: 'sessionOrApiKey',
    authorize: [sessionOnly],
    body: eraseBody,
    success: {
      status: 200,
      description: '`{account_id, erased, evidence_records_kept, evidence_records_removed}`',
    },
    response: erasureView,
    errors: {
      403: 'An API key, or `password` does not match',
      429: 'Too many wrong passwords (`login_throttled`, `Retry-After`)',
    },
    examples: { body: { password: 'correct horse battery staple', confirm: ERASE_CONFIRMATION } },
    handler: async ({ body, req, res }, { erasure }) =>
      erasure.erase(sessionOf(res), body.password, req.ip),
  }),
];
