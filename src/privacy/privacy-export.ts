import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Db, Document } from 'mongodb';
import { agentsIndexes } from '../agent/agents.repository';
import { channelsIndexes } from '../alerts/channels.repository';
import { deliveriesIndexes } from '../alerts/deliveries.repository';
import { canariesIndexes } from '../canaries/canaries.repository';
import { threatEventsIndexes, threatHitsIndexes } from '../canaries/threats.repository';
import { usersIndexes } from '../accounts/users.repository';
import {
  evidenceIndexes,
  toRecord,
  type EvidenceDoc,
  type EvidenceRepository,
} from '../evidence/evidence.repository';
import { trapsIndexes } from '../honeypot/traps.repository';
import { apiKeysIndexes } from '../keys/api-keys.repository';
import { ragDocumentsIndexes } from '../rag/documents.repository';
import { weeklySettingsIndexes } from '../weekly/weekly-settings.repository';

export const EXPORT_FORMAT = 'tripwire-privacy-export/1';

interface Section {
  name: string;
  collection: string;
  /** Kept by an erasure: the sealed log (its personal values are shredded instead). */
  keepOnErasure?: true;
  /** The order of the account's index, so the read walks it. */
  sort: Record<string, 1 | -1>;
  /** Stored fields never exported: credentials' digests and channel secrets. */
  omit?: string[];
  /** The field holding the account id, when it is the document's own `_id` (one per account). */
  accountField?: '_id';
}

/** The section's documents of one account. */
export const sectionFilter = (section: Section, accountId: string): Document => ({
  [section.accountField ?? 'accountId']: accountId,
});

/**
 * Everything held per account, each read through its account index, in the index's order;
 * exported as it is, and deleted by an erasure (privacy-erase.ts).
 */
export const ACCOUNT_SECTIONS: readonly Section[] = [
  {
    name: 'api_keys',
    collection: apiKeysIndexes.collection,
    sort: { createdAt: 1 },
    omit: ['secretHash'],
  },
  { name: 'canaries', collection: canariesIndexes.collection, sort: { createdAt: -1 } },
  { name: 'threat_events', collection: threatEventsIndexes.collection, sort: { firstHitAt: -1 } },
  { name: 'threat_hits', collection: threatHitsIndexes.collection, sort: { at: -1 } },
  {
    name: 'alert_channels',
    collection: channelsIndexes.collection,
    sort: { createdAt: 1 },
    omit: ['secret'],
  },
  {
    name: 'alert_deliveries',
    collection: deliveriesIndexes.collection,
    sort: { channelId: 1, createdAt: -1 },
  },
  { name: 'agents', collection: agentsIndexes.collection, sort: { createdAt: -1 } },
  { name: 'honeypot_traps', collection: trapsIndexes.collection, sort: { createdAt: -1 } },
  { name: 'rag_documents', collection: ragDocumentsIndexes.collection, sort: { createdAt: -1 } },
  {
    name: 'weekly_digest',
    collection: weeklySettingsIndexes.collection,
    sort: { _id: 1 },
    accountField: '_id',
  },
  {
    name: 'evidence',
    collection: evidenceIndexes.collection,
    sort: { seq: 1 },
    keepOnErasure: true,
  },
];

export const SECTION_NAMES = ACCOUNT_SECTIONS.map((section) => section.name);

const ACCOUNT_OMIT = ['passwordHash'];

function exported({ _id, ...rest }: Document, omit: readonly string[] = []): Document {
  for (const field of omit) delete rest[field];
  return { id: _id as unknown, ...rest };
}

/**
 * The caller's data as one JSON document, written to `out` section by section and record by
 * record as the database cursors give them, so an account of any size is never held in memory.
 */
export class PrivacyExport {
  constructor(
    private readonly db: Db,
    private readonly evidence: EvidenceRepository,
  ) {}

  /** A sealed record with its personal values decrypted (salts too, so they can be checked). */
  private async revealed(doc: Document): Promise<Document> {
    const personal = await this.evidence.openings(toRecord(doc as EvidenceDoc));
    return { ...doc, personal };
  }

  /** False when the account does not exist (nothing written). */
  async write(accountId: string, now: Date, out: Writable): Promise<boolean> {
    const account = await this.db
      .collection(usersIndexes.collection)
      .findOne({ _id: accountId as never });
    if (!account) return false;
    const write = async (chunk: string) => {
      if (!out.write(chunk)) await once(out, 'drain');
    };
    await write(
      `{"format":${JSON.stringify(EXPORT_FORMAT)},"exported_at":${JSON.stringify(now.toISOString())},"account":${JSON.stringify(exported(account, ACCOUNT_OMIT))}`,
    );
    for (const section of ACCOUNT_SECTIONS) {
      await write(`,${JSON.stringify(section.name)}:[`);
      const cursor = this.db
        .collection(section.collection)
        .find(sectionFilter(section, accountId))
        .sort(section.sort);
      let first = true;
      for await (const stored of cursor) {
        const sealed = section.collection === evidenceIndexes.collection;
        const doc = sealed ? await this.revealed(stored) : stored;
        await write(`${first ? '' : ','}${JSON.stringify(exported(doc, section.omit))}`);
        first = false;
      }
      await write(']');
    }
    await write('}');
    return true;
  }
}
