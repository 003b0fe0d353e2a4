import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId } from '../auth/caller';
import { operationsFor } from '../http/operation';
import type { Count, Dashboard, DashboardFigures } from './dashboard';

const countView = z.object({ key: z.string(), count: z.number().int() });

export const dashboardView = z
  .object({
    since: z.iso.datetime(),
    hits_by_day: z.array(countView),
    events_by_level: z.array(countView),
    top_canaries: z.array(countView),
    sources_by_country: z.array(countView),
    deliveries_by_outcome: z.array(countView),
    channel_health: z.array(
      z.object({
        channel_id: z.string(),
        name: z.string(),
        kind: z.string(),
        disabled: z.boolean(),
        healthy: z.boolean(),
        last_delivery_at: z.iso.datetime().nullable(),
        last_error_at: z.iso.datetime().nullable(),
        last_error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'Dashboard' });

const iso = (d: Date | null) => d?.toISOString() ?? null;
const view = (rows: Count[]) => rows.map(({ key, count }) => ({ key, count }));

function describe(f: DashboardFigures): z.output<typeof dashboardView> {
  return {
    since: f.since.toISOString(),
    hits_by_day: view(f.hitsByDay),
    events_by_level: view(f.eventsByLevel),
    top_canaries: view(f.topCanaries),
    sources_by_country: view(f.sourcesByCountry),
    deliveries_by_outcome: view(f.deliveriesByOutcome),
    channel_health: f.channelHealth.map((c) => ({
      channel_id: c.channelId,
      name: c.name,
      kind: c.kind,
      disabled: c.disabled,
      healthy: c.healthy,
      last_delivery_at: iso(c.lastDeliveryAt),
      last_error_at: iso(c.lastErrorAt),
      last_error: c.lastError,
    })),
  };
}

export interface DashboardDeps {
  dashboard: Dashboard;
  clock: Clock;
}
const operation = operationsFor<DashboardDeps>('Dashboard');

export const dashboardOperations = [
  operation({
    operationId: 'getDashboard',
    method: 'get',
    path: '/api/dashboard',
    summary: "The console overview's figures",
    description:
      "Over the last `days` whole UTC days (1–90, default 30, today included): hits by day, threat events by alert level (`pending` before the alert is prepared), the most-hit canaries, sources by country, deliveries by outcome (`in_progress` until one ends) and each channel's health.",
    auth: 'sessionOrApiKey',
    query: z.object({ days: z.coerce.number().int().min(1).max(90).default(30) }).strict(),
    success: { status: 200, description: 'The figures' },
    response: dashboardView,
    handler: async ({ query, res }, { dashboard, clock }) =>
      describe(await dashboard.figures(callerAccountId(res), query.days, clock())),
  }),
];
