import { MongoBulkWriteError, type Collection, type Db, type WriteError } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { newTimeOrderedId } from '../ids';

export type AuditAction = 'api_key.created' | 'api_key.revoked' | 'api_key.used';

export interface AuditEntry {
  id: string;
  accountId: string;
  at: Date;
  action: AuditAction;
  /** Who acted: a console session or an API key (by id). */
  actor: { type: 'session' | 'api_key'; id: string };
  /** The key the entry is about. */
  keyId: string;
  request?: { method: string; path: string; status: number; requestId: string };
}

type AuditEntryDoc = Omit<AuditEntry, 'id'> & { _id: string };

export const auditTrailIndexes: CollectionIndexes = {
  collection: 'audit_trail',
  indexes: [{ key: { accountId: 1, _id: -1 }, name: 'account_newest_first' }],
};

const DUPLICATE_KEY = 11000;

/** Ids are assigned when the event happens, so the trail's order is the order of events. */
export function withId(entry: Omit<AuditEntry, 'id'>): AuditEntry {
  return { id: newTimeOrderedId('aud', entry.at), ...entry };
}

export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next: string | null;
}

/** Append-only: no update or delete path exists. Entries outlive the keys they mention. */
export class AuditTrailRepository {
  private readonly entries: Collection<AuditEntryDoc>;

  constructor(db: Db) {
    this.entries = db.collection<AuditEntryDoc>(auditTrailIndexes.collection);
  }

  async append(entry: Omit<AuditEntry, 'id'>): Promise<AuditEntry> {
    const full = withId(entry);
    await this.appendMany([full]);
    return full;
  }

  /** Idempotent by id: re-sending entries that were already stored (a retried batch) is a no-op. */
  async appendMany(entries: readonly AuditEntry[]): Promise<void> {
    try {
      await this.entries.insertMany(
        entries.map(({ id, ...rest }) => ({ _id: id, ...rest })),
        { ordered: false },
      );
    } catch (err) {
      const onlyDuplicates =
        err instanceof MongoBulkWriteError &&
        ([] as WriteError[]).concat(err.writeErrors).every((e) => e.code === DUPLICATE_KEY);
      if (!onlyDuplicates) throw err;
    }
  }

  async listNewestFirst(accountId: string, limit: number, before?: string): Promise<AuditPage> {
    const filter = before ? { accountId, _id: { $lt: before } } : { accountId };
    const docs = await this.entries
      .find(filter)
      .sort({ _id: -1 })
      .limit(limit + 1)
      .toArray();
    const page = docs.slice(0, limit).map(({ _id, ...rest }) => ({ id: _id, ...rest }));
    return { entries: page, next: docs.length > limit ? (page.at(-1)?.id ?? null) : null };
  }
}
