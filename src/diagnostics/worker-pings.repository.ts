import type { Collection, Db } from 'mongodb';

export interface WorkerPing {
  id: string;
  accountId: string;
  requestId: string;
  attempt: number;
  recordedAt: Date;
}

type WorkerPingDoc = Omit<WorkerPing, 'id'> & { _id: string };

export class WorkerPingsRepository {
  private readonly pings: Collection<WorkerPingDoc>;

  constructor(db: Db) {
    this.pings = db.collection<WorkerPingDoc>('worker_pings');
  }

  /** Keyed by workflow id, so a retried activity rewrites the same record instead of adding one. */
  async record(ping: Omit<WorkerPing, 'id'> & { workflowId: string }): Promise<WorkerPing> {
    const { workflowId, ...fields } = ping;
    await this.pings.updateOne({ _id: workflowId }, { $set: fields }, { upsert: true });
    return { id: workflowId, ...fields };
  }
}
