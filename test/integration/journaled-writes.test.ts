/**
 * Which writes wait for the database's journal (`j: true`): a hit leaves the tripwire journal only
 * once its writes are durable, so every write that records a hit must ask for it, and an evidence
 * append must end with one that does (its chain head), which makes its records and leaves durable
 * with it. Read off the wire (the driver's command monitoring), against the real database server.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { ThreatsRepository } from '../../src/canaries/threats.repository';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { testConfig } from '../support/test-app';

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify']);

describe('journaled writes', () => {
  it('when a hit is recorded and sealed, then every write to the threat log, its event and storm asks for j: true, and its evidence append ends with one', async () => {
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

      const written = writes.map((w) => ({
        collection: String(w.command[w.commandName]),
        writeConcern: w.command.writeConcern as unknown,
      }));
      expect(new Set(written.map((w) => w.collection))).toEqual(
        new Set([
          'threat_storms',
          'threat_events',
          'threat_hits',
          'evidence',
          'evidence_leaves',
          'evidence_heads',
        ]),
      );
      const sealing = written.filter((w) => w.collection.startsWith('evidence'));
      const rest = written.filter((w) => !w.collection.startsWith('evidence'));
      for (const write of rest) {
        expect(write).toEqual({ collection: write.collection, writeConcern: { j: true } });
      }
      // One sync per append: the records and the leaves go unsynced, the head's write syncs them.
      expect(sealing).toEqual([
        { collection: 'evidence', writeConcern: { w: 1, j: false } },
        { collection: 'evidence_leaves', writeConcern: { w: 1, j: false } },
        { collection: 'evidence_heads', writeConcern: { j: true } },
        { collection: 'evidence_heads', writeConcern: { j: true } },
      ]);
    } finally {
      await client.close();
    }
  });
});
