import type { Db } from 'mongodb';
import { AgentsRepository } from '../src/agent/agents.repository';
import { UsersRepository } from '../src/accounts/users.repository';
import { AlertOutcomes, type ChannelHealth } from '../src/alerts/alert-outcomes';
import type { BuiltInSettings } from '../src/alerts/built-in-channels';
import { ChannelSender } from '../src/alerts/channel-sender';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { DeliveriesRepository } from '../src/alerts/deliveries.repository';
import { DeliveryTargets } from '../src/alerts/delivery-targets';
import type { IpEnricher } from '../src/alerts/enrichment';
import { CanariesRepository } from '../src/canaries/canaries.repository';
import { ThreatsRepository } from '../src/canaries/threats.repository';
import { WorkerPingsRepository } from '../src/diagnostics/worker-pings.repository';
import { Dashboard } from '../src/dashboard/dashboard';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { WeeklyDigests } from '../src/weekly/weekly-digest';
import { WeeklySettingsRepository } from '../src/weekly/weekly-settings.repository';
import { agentWatchActivities } from './agent-watch.activities';
import { alertDeliveryActivities, firstAttempts } from './alert-delivery.activities';
import { floorActivities } from './floor.activities';
import { threatAlertActivities } from './threat-alert.activities';
import { weeklyDigestActivities } from './weekly-digest.activities';
import { workerPingActivities } from './worker-ping.activities';

export interface ActivityDeps {
  db: Db;
  /** ALLOW_PRIVATE_WEBHOOK_TARGETS: development and tests only. */
  allowPrivateTargets: boolean;
  /** OUTBOUND_DENY_CIDRS: addresses no channel may reach. */
  outboundDeny?: readonly string[];
  builtIns: BuiltInSettings;
  enricher: IpEnricher;
  /** CHANNEL_DISABLE_AFTER and where notices start; absent, no channel is disabled on its own. */
  channelHealth?: ChannelHealth;
}

/** Activities are thin I/O adapters over the repositories; workflows see only this type. */
export function createActivities({
  db,
  allowPrivateTargets,
  outboundDeny = [],
  builtIns,
  enricher,
  channelHealth,
}: ActivityDeps) {
  const channels = new ChannelsRepository(db);
  const users = new UsersRepository(db);
  const threats = new ThreatsRepository(db);
  // One store per worker, so every evidence append of an account shares one group commit.
  const evidence = new EvidenceStore(db, () => new Date());
  const targets = new DeliveryTargets(channels, users, builtIns);
  const canaries = new CanariesRepository(db);
  const sender = new ChannelSender(channels, users, allowPrivateTargets, builtIns, outboundDeny);
  const deliveries = new DeliveriesRepository(db);
  const outcomes = new AlertOutcomes(deliveries, channels, evidence, channelHealth);
  return {
    ...workerPingActivities({ pings: new WorkerPingsRepository(db) }),
    ...floorActivities,
    ...alertDeliveryActivities({ targets, sender, outcomes }),
    ...threatAlertActivities({
      threats,
      canaries,
      deliveries,
      evidence,
      enricher,
      targets,
      sendFirst: firstAttempts({ sender, outcomes }),
    }),
    ...agentWatchActivities({ agents: new AgentsRepository(db), threats, evidence }),
    ...weeklyDigestActivities({
      settings: new WeeklySettingsRepository(db),
      digests: new WeeklyDigests(db, new Dashboard(db, channels), canaries),
    }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
