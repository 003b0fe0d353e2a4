import { z } from 'zod';
import { DomainError } from '../../errors';
import { operationsFor } from '../../http/operation';
import {
  checkpointView,
  consistencyView,
  describeCheckpoint,
  publicKeyView,
  type EvidenceLog,
} from './evidence-log';

const size = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
export const consistencyQuery = z.object({ from: size, to: size });

const operation = operationsFor<EvidenceLog>('Evidence');

/**
 * `/api/log`, public: the Merkle log's signed checkpoints, its public key, and consistency
 * proofs, so anyone holding an earlier checkpoint can check that the log only grew.
 */
export const logOperations = [
  /** The latest checkpoint as the signed note itself (text/plain, as tlog clients fetch it). */
  operation({
    operationId: 'getLatestCheckpoint',
    method: 'get',
    path: '/api/log/checkpoint',
    summary: "The evidence log's latest signed checkpoint",
    auth: 'none',
    success: {
      status: 200,
      description: 'A C2SP tlog-checkpoint as a signed note (Ed25519)',
      contentType: 'text/plain',
    },
    errors: { 404: 'No checkpoint yet' },
    handler: async ({ res }, log) => {
      const latest = await log.checkpoints.latest();
      if (!latest)
        throw new DomainError('not_found', 'No checkpoint has been signed yet: the log is empty');
      res.set('Cache-Control', 'no-store').type('text/plain').send(latest.note);
    },
  }),
  operation({
    operationId: 'getCheckpoint',
    method: 'get',
    path: '/api/log/checkpoints/{size}',
    summary: 'The checkpoint signed at one tree size',
    description: 'Every signed checkpoint is kept.',
    auth: 'none',
    success: { status: 200, description: '`{size, root_hash, note, issued_at}`' },
    response: checkpointView,
    errors: { 404: 'None signed at that size', 422: 'Not a size' },
    handler: async ({ params }, log) => {
      const parsed = size.safeParse(params.size);
      if (!parsed.success) throw new DomainError('invalid', 'size: a tree size of at least 1');
      const checkpoint = await log.checkpoints.bySize(parsed.data);
      if (!checkpoint)
        throw new DomainError('not_found', `No checkpoint was signed at size ${parsed.data}`);
      return describeCheckpoint(checkpoint);
    },
  }),
  operation({
    operationId: 'getLogPublicKey',
    method: 'get',
    path: '/api/log/public-key',
    summary: "The checkpoint signing key's public half",
    auth: 'none',
    success: {
      status: 200,
      description: '`{origin, vkey, key_id, fingerprint_sha256, algorithm, leaf_rule}`',
    },
    response: publicKeyView,
    handler: (_input, log) => log.publicKey(),
  }),
  operation({
    operationId: 'getConsistencyProof',
    method: 'get',
    path: '/api/log/consistency',
    summary: 'RFC 9162 consistency proof between two tree sizes',
    description: 'Proves that the log at `to` extends the log at `from`.',
    auth: 'none',
    query: consistencyQuery,
    success: { status: 200, description: '`{from_size, to_size, proof}`' },
    response: consistencyView,
    errors: { 404: 'No checkpoint signed at `to`' },
    handler: async ({ query }, log) => log.consistency(query.from, query.to),
  }),
];
