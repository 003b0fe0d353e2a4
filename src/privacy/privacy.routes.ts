import type { Clock } from '../clock';
import { callerAccountId } from '../auth/caller';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { z } from 'zod';
import { SECTION_NAMES, type PrivacyExport } from './privacy-export';

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
  clock: Clock;
}
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
];
