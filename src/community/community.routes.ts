import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId } from '../auth/caller';
import { operationsFor } from '../http/operation';
import { limitSchema } from '../http/pagination';
import type { CommunityIndicators } from './community-indicators';

const indicatorView = z
  .object({
    ip: z.string(),
    hits: z.number().int(),
    workspaces: z.number().int(),
    first_seen: z.iso.datetime(),
    last_seen: z.iso.datetime(),
  })
  .meta({ id: 'CommunityIndicator' });

export const indicatorListView = z
  .object({ sharing: z.boolean(), indicators: z.array(indicatorView) })
  .meta({ id: 'CommunityIndicators' });

export interface CommunityDeps {
  indicators: CommunityIndicators;
  clock: Clock;
}
const operation = operationsFor<CommunityDeps>('Community');

export const communityOperations = [
  operation({
    operationId: 'listCommunityIndicators',
    method: 'get',
    path: '/api/community/indicators',
    summary: 'Addresses seen by several opted-in workspaces',
    description:
      'Public source addresses that fired canaries of at least `COMMUNITY_MIN_WORKSPACES` different workspaces which opted in (`community_sharing` in the settings) within 30 days: hits, the number of workspaces, first and last seen, never which workspaces. Most workspaces first, at most `limit`. An account that has not opted in sees none (`sharing: false`) and shares none.',
    auth: 'sessionOrApiKey',
    query: z.object({ limit: limitSchema }).strict(),
    success: { status: 200, description: '`{sharing, indicators}`' },
    response: indicatorListView,
    handler: async ({ query, res }, { indicators, clock }) => {
      const list = await indicators.list(callerAccountId(res), clock(), query.limit);
      return {
        sharing: list !== null,
        indicators: (list ?? []).map((i) => ({
          ip: i.ip,
          hits: i.hits,
          workspaces: i.workspaces,
          first_seen: i.firstSeen.toISOString(),
          last_seen: i.lastSeen.toISOString(),
        })),
      };
    },
  }),
];
