import { DomainError } from '../../errors';
import { operationsFor } from '../../http/operation';
import { cosignedNote } from './checkpoints';
import type { EvidenceLog } from './evidence-log';
import { parseTilePath } from './tiles';

const operation = operationsFor<EvidenceLog>('Evidence');

/** A tile's bytes never change: caches anywhere may keep it for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * `/log/`, public and unauthenticated: the evidence log as C2SP tlog-tiles, so anyone can mirror
 * it, recompute every checkpoint's root and watch it only grow (npm run evidence-monitor).
 */
export const tilesOperations = [
  operation({
    operationId: 'getTlogCheckpoint',
    method: 'get',
    path: '/log/checkpoint',
    summary: "The log's published checkpoint, with every witness cosignature",
    description:
      'C2SP tlog-tiles: the newest checkpoint the witnesses were asked to cosign, as a signed note carrying the log signature and each cosignature (C2SP tlog-cosignature) it got.',
    auth: 'none',
    success: { status: 200, description: 'A signed note', contentType: 'text/plain' },
    errors: { 404: 'Nothing published yet' },
    handler: async ({ res }, log) => {
      const published = await log.checkpoints.published();
      if (!published) {
        throw new DomainError(
          'not_found',
          'No checkpoint has been published yet: the log is empty',
        );
      }
      res.set('Cache-Control', 'no-cache').type('text/plain; charset=utf-8');
      res.send(cosignedNote(published));
    },
  }),
  operation({
    operationId: 'getTlogTile',
    method: 'get',
    path: '/log/tile/{tile_path}',
    expressPath: ['/log/tile/{*tile_path}'],
    summary: 'A Merkle tree tile or an entry bundle',
    description:
      '`<L>/<N>[.p/<W>]`: the hashes of tile N at level L (C2SP tlog-tiles, N in `x`-prefixed 3-digit groups); `entries/<N>[.p/<W>]`: its entries, each the 32 bytes of a record content hash with a 2-byte length. Immutable.',
    auth: 'none',
    success: {
      status: 200,
      description: 'The tile or bundle',
      contentType: 'application/octet-stream',
    },
    errors: { 404: 'Not in the log (yet)', 422: 'Not a tile path' },
    handler: async ({ params, res }, log) => {
      const raw = params.tile_path as unknown as string[] | string;
      const path = Array.isArray(raw) ? raw.join('/') : raw;
      const ref = parseTilePath(path);
      if (!ref) {
        throw new DomainError(
          'invalid',
          `tile path: expected <level>/<N>[.p/<width>] or entries/<N>[.p/<width>] (N as x001/234), not ${path}`,
        );
      }
      const body = await log.tiles.read(ref);
      if (!body) throw new DomainError('not_found', `tile ${path}: not in the log yet`);
      res.set('Cache-Control', IMMUTABLE).type('application/octet-stream').send(body);
    },
  }),
];
