import type { Db } from 'mongodb';
import type { UsersRepository } from '../accounts/users.repository';
import { threatHitsIndexes } from '../canaries/threats.repository';
import { whyNotGlobalUnicast } from '../net/special-purpose-addresses';

const WINDOW_MS = 30 * 86_400_000;

export interface Indicator {
  ip: string;
  /** Hits from it on opted-in workspaces' canaries, and how many workspaces those were. */
  hits: number;
  workspaces: number;
  firstSeen: Date;
  lastSeen: Date;
}

/**
 * Source addresses that fired canaries of at least `minWorkspaces` different opted-in workspaces
 * in the last 30 days. Only opted-in accounts' hits are read (through the hits' account index),
 * only public addresses come out, and no answer names a workspace.
 */
export class CommunityIndicators {
  constructor(
    private readonly db: Db,
    private readonly users: UsersRepository,
    private readonly minWorkspaces: number,
  ) {}

  async list(callerId: string, now: Date, limit: number): Promise<Indicator[] | null> {
    const members = await this.users.communityMembers();
    if (!members.includes(callerId)) return null;
    const rows = await this.db
      .collection(threatHitsIndexes.collection)
      .aggregate<{ _id: string; hits: number; accounts: string[]; first: Date; last: Date }>([
        {
          $match: {
            accountId: { $in: members },
            at: { $gte: new Date(now.getTime() - WINDOW_MS) },
            'source.ip': { $ne: '' },
          },
        },
        {
          $group: {
            _id: '$source.ip',
            hits: { $sum: 1 },
            accounts: { $addToSet: '$accountId' },
            first: { $min: '$at' },
            last: { $max: '$at' },
          },
        },
      ])
      .toArray();
    return rows
      .filter((row) => row.accounts.length >= this.minWorkspaces)
      .filter((row) => whyNotGlobalUnicast(row._id) === undefined)
      .map((row) => ({
        ip: row._id,
        hits: row.hits,
        workspaces: row.accounts.length,
        firstSeen: row.first,
        lastSeen: row.last,
      }))
      .sort((a, b) => b.workspaces - a.workspaces || b.hits - a.hits || a.ip.localeCompare(b.ip))
      .slice(0, limit);
  }
}
