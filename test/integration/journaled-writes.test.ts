/**
 * Which writes wait for the database's journal (`j: true`): a hit leaves the tripwire journal only
 * once its writes are durable, so each step that records a hit must end with a write that asks for
 * it, which makes the unsynced writes before it durable with it: a storm's claim with its event,
 * an evidence append's records and leaves with its chain head, the threat log and the events'
 * counts with the canaries' tallies. Read off the wire (the driver's command monitoring), against
 * the real database server.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { CanariesRepository } from '../../src/canaries/canaries.repository';
import { ThreatsRepository } from '../../src/canaries/threats.repository';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { testConfig } from '../support/test-app';

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify']);

describe('journaled writes', () => {
  it('when a hit is recorded and sealed, then its storm claim, its evidence append and its threat log each end with a write that asks for j: true', async () => {
    const config = testConfig();
    const client = new MongoClient(config.MONGODB_URI, { monitorCommands: true });
    const writes: CommandStartedEvent[] = [];
    client.on('commandStarted', (event) => {
      if (WRITES.has(event.commandName)) writes.push(event);
    });
    try {
      const db = client.db(config.MONGODB_DB);
      const threats = new ThreatsRepository(db);
      const evidence = new EvidenceStore(db, () => new Date());
      const at = new Date();
      const [storm] = await threats.claimStorms([{ stormKey: 'cnr_1|203.0.113.9', at }], 60_000);
      const source = {
        ip: '203.0.113.9',
        userAgent: 'curl/8',
        via: 'url' as const,
        mailServer: null,
      };
      await threats.openEvents([
        {
          id: storm!.threatEventId,
          accountId: 'usr_1',
          canaryId: 'cnr_1',
          canaryKind: 'url',
          platform: 'curl',
          source,
          firstHitAt: at,
          lastHitAt: at,
          hitCount: 0,
          alert: null,
        },
      ]);
      const [record] = await evidence.appendMany('usr_1', [{ kind: 'threat.hit', data: { at } }]);
      await threats.addHits([
        {
          id: 'hit_1',
          accountId: 'usr_1',
          canaryId: 'cnr_1',
          threatEventId: storm!.threatEventId,
          at,
          source,
          requestId: null,
          evidence: { logId: record!.id, seq: record!.seq, contentHash: record!.contentHash! },
        },
      ]);

      await new CanariesRepository(db).countHits([{ canaryId: 'cnr_1', hits: 1, lastAt: at }]);

      const written = writes.map((w) => ({
        collection: String(w.command[w.commandName]),
        writeConcern: w.command.writeConcern as unknown,
      }));
      const unsynced = { w: 1, j: false };
      const synced = { j: true };
      expect(written).toEqual([
        { collection: 'threat_storms', writeConcern: unsynced },
        { collection: 'threat_events', writeConcern: synced },
        { collection: 'evidence', writeConcern: unsynced },
        { collection: 'evidence_leaves', writeConcern: unsynced },
        { collection: 'evidence_heads', writeConcern: synced },
        { collection: 'evidence_heads', writeConcern: synced },
        { collection: 'threat_hits', writeConcern: unsynced },
        { collection: 'threat_events', writeConcern: unsynced },
        { collection: 'canaries', writeConcern: synced },
      ]);
    } finally {
      await client.close();
    }
  });
});
