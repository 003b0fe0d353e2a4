import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError } from '../../db/mongo';
import { leavesIndexes, type LeafDoc } from './log-leaves';
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  neededSubtrees,
  peaks,
  peaksRoot,
  pushLeaf,
  subtreeKey,
  type Peak,
  type Subtree,
  type SubtreeLookup,
} from './merkle';

/** The hash of a complete subtree above the leaves, by `level/index`. Written once, never changed. */
export interface NodeDoc {
  _id: string;
  hash: string;
}

export const nodesIndexes: CollectionIndexes = { collection: 'evidence_nodes', indexes: [] };

const INTEGRATE_BATCH = 5_000;

/** The leaf hash of a record: RFC 9162's over the 32 raw bytes of its content hash. */
export const recordLeafHash = (contentHash: string) => leafHash(Buffer.from(contentHash, 'hex'));

/**
 * The Merkle tree over the leaves, stored as the hash of every complete subtree (Tessera keeps
 * the same hashes in tiles): a proof at any size reads O(log n) of them by `_id`, in one query per
 * collection. Nodes are deterministic, so several processes integrating at once write the same
 * documents and a duplicate is simply already there.
 */
export class MerkleTreeStore {
  private readonly leaves: Collection<LeafDoc>;
  private readonly nodes: Collection<NodeDoc>;

  constructor(db: Db) {
    this.leaves = db.collection<LeafDoc>(leavesIndexes.collection);
    this.nodes = db.collection<NodeDoc>(nodesIndexes.collection);
  }

  /** Runs a proof computation against the stored subtrees it needs, fetched at once. */
  async compute<T>(fn: (lookup: SubtreeLookup) => T): Promise<T> {
    const hashes = await this.hashes(neededSubtrees(fn));
    return fn((s) => hashes.get(subtreeKey(s))!);
  }

  inclusionProof(leafIndex: number, size: number): Promise<Buffer[]> {
    return this.compute((lookup) => inclusionProof(leafIndex, size, lookup));
  }

  /** Many proofs against one size with one fetch: the subtrees they share are read once. */
  inclusionProofs(leafIndexes: readonly number[], size: number): Promise<Buffer[][]> {
    return this.compute((lookup) => leafIndexes.map((i) => inclusionProof(i, size, lookup)));
  }

  consistencyProof(first: number, second: number): Promise<Buffer[]> {
    return this.compute((lookup) => consistencyProof(first, second, lookup));
  }

  /**
   * Hashes the leaves after `from` (a size already integrated) into complete-subtree nodes, up to
   * the first missing leaf, and answers the size reached and its root.
   */
  async integrate(from: number): Promise<{ size: number; root: Buffer }> {
    const known = await this.hashes(peaks(from));
    const stack: Peak[] = peaks(from).map((p) => ({ ...p, hash: known.get(subtreeKey(p))! }));
    let size = from;
    for (;;) {
      const docs = await this.leaves
        .find({ _id: { $gte: size, $lt: size + INTEGRATE_BATCH } })
        .sort({ _id: 1 })
        .toArray();
      const made: NodeDoc[] = [];
      let gap = false;
      for (const doc of docs) {
        // Not appended yet (or still being written): the next integration continues here.
        if (doc._id !== size) {
          gap = true;
          break;
        }
        for (const node of pushLeaf(stack, size, recordLeafHash(doc.contentHash))) {
          made.push({ _id: subtreeKey(node), hash: node.hash.toString('hex') });
        }
        size += 1;
      }
      await this.insertNodes(made);
      if (gap || docs.length < INTEGRATE_BATCH) break;
    }
    return { size, root: peaksRoot(stack) };
  }

  /** The content hashes of leaves start… in order, as many as are stored without a gap. */
  async leafContentHashes(start: number, count: number): Promise<Buffer[]> {
    const docs = await this.leaves
      .find({ _id: { $gte: start, $lt: start + count } }, { projection: { contentHash: 1 } })
      .sort({ _id: 1 })
      .toArray();
    const out: Buffer[] = [];
    for (const doc of docs) {
      if (doc._id !== start + out.length) break;
      out.push(Buffer.from(doc.contentHash, 'hex'));
    }
    return out;
  }

  /** The stored hashes of subtrees index… at a level above the leaves, as many as exist in a row. */
  async nodeHashes(level: number, start: number, count: number): Promise<Buffer[]> {
    const ids = Array.from({ length: count }, (_, i) => subtreeKey({ level, index: start + i }));
    const docs = await this.nodes.find({ _id: { $in: ids } }).toArray();
    const byId = new Map(docs.map((d) => [d._id, Buffer.from(d.hash, 'hex')]));
    const out: Buffer[] = [];
    for (const id of ids) {
      const hash = byId.get(id);
      if (!hash) break;
      out.push(hash);
    }
    return out;
  }

  private async insertNodes(made: NodeDoc[]): Promise<void> {
    if (!made.length) return;
    try {
      await this.nodes.insertMany(made, { ordered: false });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  private async hashes(subtrees: readonly Subtree[]): Promise<Map<string, Buffer>> {
    const leafIds = subtrees.filter((s) => s.level === 0).map((s) => s.index);
    const nodeIds = subtrees.filter((s) => s.level > 0).map(subtreeKey);
    const [leaves, nodes] = await Promise.all([
      leafIds.length ? this.leaves.find({ _id: { $in: leafIds } }).toArray() : [],
      nodeIds.length ? this.nodes.find({ _id: { $in: nodeIds } }).toArray() : [],
    ]);
    const found = new Map<string, Buffer>([
      ...leaves.map((l) => [`0/${l._id}`, recordLeafHash(l.contentHash)] as const),
      ...nodes.map((n) => [n._id, Buffer.from(n.hash, 'hex')] as const),
    ]);
    const missing = subtrees.find((s) => !found.has(subtreeKey(s)));
    if (missing) throw new Error(`Merkle log: subtree ${subtreeKey(missing)} is not stored`);
    return found;
  }
}
