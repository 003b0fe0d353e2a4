import { z } from 'zod';
import type { CheckpointDoc } from '../log/checkpoints';
import type { EvidenceLog } from '../log/evidence-log';
import { exportedRecord, exportedRecordView } from '../evidence-record.view';
import type { ChainHeadDoc, EvidenceRepository } from '../evidence.repository';

const CHUNK = 200;

/**
 * An exported record with its place in the Merkle log, the log's signed inclusion promise for it
 * (the note, see inclusion-promise.ts) and its proof against the cut's checkpoint.
 */
export const cutRecordView = exportedRecordView.extend({
  leaf_index: z.number().int().nullable(),
  promise: z.string().nullable(),
  inclusion_proof: z.array(z.string()).nullable(),
});
export type CutRecord = z.output<typeof cutRecordView>;

/** One account's log taken at one point: its chain head and a checkpoint covering every record. */
export interface Cut {
  accountId: string;
  head: ChainHeadDoc | null;
  checkpoint: CheckpointDoc | null;
}

interface CutDeps {
  evidence: EvidenceRepository;
  log: EvidenceLog;
}

/**
 * Cuts the account's log at its chain head: whatever is appended later is not part of the cut.
 * Every record up to the head is made a leaf first (the store does that before moving the head;
 * this heals a record whose process stopped in between, or another replica still writing), then
 * a checkpoint over all leaves is taken, so every record of the cut has a proof against it.
 */
export async function cutLog({ evidence, log }: CutDeps, accountId: string): Promise<Cut> {
  const head = await evidence.chainHead(accountId);
  if (!head) return { accountId, head, checkpoint: await log.checkpoints.latest() };
  const [records, leaves] = await Promise.all([
    evidence.countUpTo(accountId, head.seq),
    log.leaves.countUpTo(accountId, head.seq),
  ]);
  if (leaves < records) {
    for await (const chunk of chunks(evidence.streamAscending(accountId, head.seq))) {
      await log.leaves.append(
        chunk.map((r) => ({ logId: r.id, accountId, seq: r.seq, contentHash: r.contentHash! })),
      );
    }
  }
  return { accountId, head, checkpoint: await log.checkpoints.issue() };
}

/** The cut's records oldest first, in chunks, each with its inclusion proof (unless not wanted). */
export async function* cutRecords(
  { evidence, log }: CutDeps,
  cut: Cut,
  { withProofs = true } = {},
): AsyncGenerator<CutRecord[]> {
  if (!cut.head) return;
  const size = cut.checkpoint?._id ?? 0;
  for await (const chunk of chunks(evidence.streamAscending(cut.accountId, cut.head.seq))) {
    const indexes = await log.leaves.indexesOf(chunk.map((r) => r.id));
    const proven = withProofs ? chunk.filter((r) => (indexes.get(r.id) ?? size) < size) : [];
    const proofs = await log.tree.inclusionProofs(
      proven.map((r) => indexes.get(r.id)!),
      size,
    );
    const byLogId = new Map(proven.map((r, i) => [r.id, proofs[i]!]));
    const openings = await Promise.all(chunk.map((record) => evidence.openings(record)));
    yield chunk.map((record, i) => {
      const leafIndex = indexes.get(record.id) ?? null;
      return {
        ...exportedRecord(record, openings[i]),
        leaf_index: leafIndex,
        promise: leafIndex === null ? null : log.promise(record, leafIndex).note,
        inclusion_proof: byLogId.get(record.id)?.map((p) => p.toString('hex')) ?? null,
      };
    });
  }
}

async function* chunks<T>(items: AsyncIterable<T>): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of items) {
    chunk.push(item);
    if (chunk.length === CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length) yield chunk;
}
