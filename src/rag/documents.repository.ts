import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';

/** A registered rag document: its marker is a canary, so a leak of the text fires like a tripwire. */
export interface RagDocument {
  id: string;
  accountId: string;
  title: string;
  canaryId: string;
  marker: string;
  contentLength: number;
  createdAt: Date;
}

type DocumentDoc = Omit<RagDocument, 'id'> & { _id: string };

export const ragDocumentsIndexes: CollectionIndexes = {
  collection: 'rag_documents',
  indexes: [{ key: { accountId: 1, createdAt: -1 }, name: 'account_newest_first' }],
};

const toDocument = ({ _id, ...rest }: DocumentDoc): RagDocument => ({ id: _id, ...rest });

/** Every read and write of a document names its account: another account's is not there. */
export class DocumentsRepository {
  private readonly documents: Collection<DocumentDoc>;

  constructor(db: Db) {
    this.documents = db.collection<DocumentDoc>(ragDocumentsIndexes.collection);
  }

  async create(fields: Omit<RagDocument, 'id' | 'createdAt'>, now: Date): Promise<RagDocument> {
    const doc: DocumentDoc = { _id: newId('doc'), ...fields, createdAt: now };
    await this.documents.insertOne(doc);
    return toDocument(doc);
  }

  async list(accountId: string): Promise<RagDocument[]> {
    const docs = await this.documents.find({ accountId }).sort({ createdAt: -1 }).toArray();
    return docs.map(toDocument);
  }

  async find(accountId: string, documentId: string): Promise<RagDocument | null> {
    const doc = await this.documents.findOne({ _id: documentId, accountId });
    return doc && toDocument(doc);
  }

  /** Unscoped, and only the owner: for the 404-versus-403 answer when `find` finds nothing. */
  async ownerOf(documentId: string): Promise<string | null> {
    const doc = await this.documents.findOne({ _id: documentId }, { projection: { accountId: 1 } });
    return doc?.accountId ?? null;
  }

  async remove(accountId: string, documentId: string): Promise<boolean> {
    return (await this.documents.deleteOne({ _id: documentId, accountId })).deletedCount === 1;
  }
}
