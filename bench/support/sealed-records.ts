import { randomBytes } from 'node:crypto';
import type { EvidenceDoc } from '../../src/evidence/evidence.repository';
import { SEAL_ALGORITHM } from '../../src/evidence/seal';
import { newTimeOrderedId } from '../../src/ids';

export const randomHash = () => randomBytes(32).toString('hex');

/**
 * A `threat.hit` record as `EvidenceStore` seals it (personal values as their digests), with a
 * random content hash and an `_id` ordered by time, as `newTimeOrderedId` makes them. It seals one
 * hit: the most records hits can make (a source that changes its user agent at every request gets
 * a record for each).
 */
export const sealedHit = (accountId: string, seq: number): EvidenceDoc => ({
  _id: newTimeOrderedId('evd'),
  accountId,
  seq,
  kind: 'threat.hit',
  sealedAt: new Date(),
  prevHash: randomHash(),
  prevLogId: null,
  data: {
    threat_event_id: 'thr_bench',
    canary_id: 'cny_bench',
    canary_kind: 'url',
    via: 'http',
    ip: `hmac-sha256:${randomHash()}`,
    user_agent: `hmac-sha256:${randomHash()}`,
    mail_server: null,
    hits: [{ hit_id: newTimeOrderedId('hit'), at: new Date().toISOString(), request_id: null }],
  },
  contentHash: randomHash(),
  algorithm: SEAL_ALGORITHM,
});
