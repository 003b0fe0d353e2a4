import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';

/** An AI agent of the account, watched by its own Temporal workflow. */
export interface Agent {
  id: string;
  accountId: string;
  name: string;
  platform: string | null;
  heartbeatIntervalSeconds: number;
  lastHeartbeatAt: Date | null;
  createdAt: Date;
}

type AgentDoc = Omit<Agent, 'id'> & {
  _id: string;
  /** Outbox marker: set until the agent's watch workflow is known to be started (reconciler). */
  watchPendingSince?: Date;
};

export const agentsIndexes: CollectionIndexes = {
  collection: 'agents',
  indexes: [
    { key: { accountId: 1, createdAt: -1 }, name: 'account_newest_first' },
    { key: { watchPendingSince: 1 }, name: 'watch_pending', sparse: true },
  ],
};

const toAgent = ({ _id, watchPendingSince: _pending, ...rest }: AgentDoc): Agent => ({
  id: _id,
  ...rest,
});

/**
 * Reads and writes made for a caller name the agent's account; the unscoped ones serve the watch
 * workflow and the start reconciler, which run on no caller's behalf.
 */
export class AgentsRepository {
  private readonly agents: Collection<AgentDoc>;

  constructor(db: Db) {
    this.agents = db.collection<AgentDoc>(agentsIndexes.collection);
  }

  async create(
    fields: Pick<Agent, 'accountId' | 'name' | 'platform' | 'heartbeatIntervalSeconds'>,
    now: Date,
  ): Promise<Agent> {
    const doc: AgentDoc = {
      _id: newId('agt'),
      ...fields,
      lastHeartbeatAt: null,
      createdAt: now,
      watchPendingSince: now,
    };
    await this.agents.insertOne(doc);
    return toAgent(doc);
  }

  /**
   * The agent's watch workflow exists: the reconciler has nothing left to start for it. By id
   * alone: the route marks the agent it has just created, the reconciler works for no caller.
   */
  async watchStarted(agentId: string): Promise<void> {
    await this.agents.updateOne({ _id: agentId }, { $unset: { watchPendingSince: '' } });
  }

  /** Agents whose watch start was not confirmed by `before`, oldest first. */
  async pendingWatches(before: Date, limit: number): Promise<Agent[]> {
    const docs = await this.agents
      .find({ watchPendingSince: { $lte: before } })
      .sort({ watchPendingSince: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toAgent);
  }

  async list(accountId: string): Promise<Agent[]> {
    const docs = await this.agents.find({ accountId }).sort({ createdAt: -1 }).toArray();
    return docs.map(toAgent);
  }

  async find(accountId: string, agentId: string): Promise<Agent | null> {
    const doc = await this.agents.findOne({ _id: agentId, accountId });
    return doc && toAgent(doc);
  }

  /** Unscoped, and only the owner: for the 404-versus-403 answer when `find` finds nothing. */
  async ownerOf(agentId: string): Promise<string | null> {
    const doc = await this.agents.findOne({ _id: agentId }, { projection: { accountId: 1 } });
    return doc?.accountId ?? null;
  }

  async recordHeartbeat(accountId: string, agentId: string, at: Date): Promise<void> {
    await this.agents.updateOne({ _id: agentId, accountId }, { $max: { lastHeartbeatAt: at } });
  }

  async remove(accountId: string, agentId: string): Promise<boolean> {
    return (await this.agents.deleteOne({ _id: agentId, accountId })).deletedCount === 1;
  }
}
