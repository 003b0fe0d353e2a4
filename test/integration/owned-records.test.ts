/**
 * Account scoping in the repository layer itself, against the real database: a read, update or
 * delete that names another account finds and changes nothing, whatever route calls it. The
 * routes' 404-versus-403 answers are covered by each resource's own tests.
 */
import { AgentsRepository } from '../../src/agent/agents.repository';
import { ChannelsRepository } from '../../src/alerts/channels.repository';
import { CanariesRepository } from '../../src/canaries/canaries.repository';
import type { DecoySettings } from '../../src/canaries/decoys';
import { makeDecoy } from '../../src/canaries/kinds';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes, type Database } from '../../src/db/mongo';
import { TrapsRepository } from '../../src/honeypot/traps.repository';
import { DocumentsRepository } from '../../src/rag/documents.repository';
import { testConfig } from '../support/test-app';

let mongo: Database;
const owner = 'usr_owner';
const other = 'usr_other';
const now = new Date('2026-03-01T12:00:00Z');

beforeAll(async () => {
  const config = testConfig();
  mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(mongo.db, ALL_INDEXES);
});
afterAll(async () => {
  await mongo.db.dropDatabase();
  await mongo.client.close();
});

/** One repository of owned records: how to make one, and its scoped read and delete. */
interface Owned {
  create(accountId: string): Promise<{ id: string }>;
  find(accountId: string, id: string): Promise<unknown>;
  ownerOf(id: string): Promise<string | null>;
  remove(accountId: string, id: string): Promise<boolean>;
}

function repositories(): Record<string, Owned> {
  const traps = new TrapsRepository(mongo.db);
  const documents = new DocumentsRepository(mongo.db);
  const agents = new AgentsRepository(mongo.db);
  const channels = new ChannelsRepository(mongo.db);
  return {
    traps: {
      create: (accountId) =>
        traps.create({ accountId, name: 'staging', kind: 'endpoint', canaryIds: [] }, now),
      find: (a, id) => traps.find(a, id),
      ownerOf: (id) => traps.ownerOf(id),
      remove: (a, id) => traps.remove(a, id),
    },
    documents: {
      create: (accountId) =>
        documents.create(
          { accountId, title: 'FAQ', canaryId: 'cnr_x', marker: 'ref-x', contentLength: 3 },
          now,
        ),
      find: (a, id) => documents.find(a, id),
      ownerOf: (id) => documents.ownerOf(id),
      remove: (a, id) => documents.remove(a, id),
    },
    agents: {
      create: (accountId) =>
        agents.create(
          { accountId, name: 'bot', platform: null, heartbeatIntervalSeconds: 60 },
          now,
        ),
      find: (a, id) => agents.find(a, id),
      ownerOf: (id) => agents.ownerOf(id),
      remove: (a, id) => agents.remove(a, id),
    },
    channels: {
      create: (accountId) =>
        channels.create(
          { accountId, kind: 'slack', name: 'ops', url: 'https://hooks.example/x', secret: null },
          now,
        ),
      find: (a, id) => channels.find(a, id),
      ownerOf: (id) => channels.ownerOf(id),
      remove: (a, id) => channels.remove(a, id),
    },
  };
}

describe.each(['traps', 'documents', 'agents', 'channels'])('%s repository', (name) => {
  const repo = () => repositories()[name]!;

  it('when a scoped read names another account, then it finds nothing and ownerOf names the owner', async () => {
    const { id } = await repo().create(owner);

    expect(await repo().find(other, id)).toBeNull();
    expect(await repo().find(owner, id)).toMatchObject({ id, accountId: owner });
    expect(await repo().ownerOf(id)).toBe(owner);
  });

  it('when a scoped delete names another account, then nothing is deleted', async () => {
    const { id } = await repo().create(owner);

    expect(await repo().remove(other, id)).toBe(false);
    expect(await repo().find(owner, id)).not.toBeNull();

    expect(await repo().remove(owner, id)).toBe(true);
    expect(await repo().find(owner, id)).toBeNull();
    expect(await repo().ownerOf(id)).toBeNull();
  });
});

describe('scoped updates', () => {
  it('when a channel update names another account, then the channel is unchanged', async () => {
    const channels = new ChannelsRepository(mongo.db);
    const { id } = await channels.create(
      {
        accountId: owner,
        kind: 'slack',
        name: 'ops',
        url: 'https://hooks.example/x',
        secret: null,
      },
      now,
    );

    expect(
      await channels.update(other, id, { name: 'taken over', disabled: true }, now),
    ).toBeNull();
    expect(await channels.find(owner, id)).toMatchObject({ name: 'ops', disabled: false });
  });

  it("when a heartbeat names another account, then the agent's last heartbeat is unchanged", async () => {
    const agents = new AgentsRepository(mongo.db);
    const agent = await agents.create(
      { accountId: owner, name: 'bot', platform: null, heartbeatIntervalSeconds: 60 },
      now,
    );

    await agents.recordHeartbeat(other, agent.id, now);
    expect((await agents.find(owner, agent.id))?.lastHeartbeatAt).toBeNull();
  });

  it('when a canary is read or retired for another account, then it is not found and still fires', async () => {
    const canaries = new CanariesRepository(mongo.db);
    const decoySettings: DecoySettings = {
      publicBaseUrl: 'https://tripwire.example',
      decoyEmailDomain: 'mail.tripwire.example',
      dnsDomain: 'dns.tripwire.example',
      publicHost: 'tripwire.example',
      postgresPort: 5432,
    };
    const canary = await canaries.plant(
      { accountId: owner, kind: 'url', memo: '', platform: null },
      makeDecoy('url', decoySettings),
      now,
    );

    expect(await canaries.find(other, canary.id)).toBeNull();
    expect(await canaries.ownerOf(canary.id)).toBe(owner);
    expect(await canaries.retire(other, canary.id, now)).toBeNull();
    expect((await canaries.find(owner, canary.id))?.retiredAt).toBeNull();
    expect(await canaries.canaryIdForDigests(canary.tokenDigests)).toBe(canary.id);
  });
});
