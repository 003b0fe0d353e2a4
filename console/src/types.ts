/**
 * The API's answers as the console reads them: the server's own view schemas, imported as types
 * only, so a change to an answer fails the console's type check and the bundle holds no server
 * code (eslint refuses a value import from the server here).
 */
import type { z } from 'zod';
import type { sessionView } from '../../src/accounts/auth.routes';
import type { settingsView } from '../../src/accounts/settings.routes';
import type { meView } from '../../src/accounts/users.routes';
import type {
  bulkResendView,
  channelListView,
  channelTestView,
  channelView,
  deliveryListView,
  resendView,
} from '../../src/alerts/channels.routes';
import type { canaryListView, canaryView } from '../../src/canaries/canaries.routes';
import type {
  openStormsView,
  threatDeliveriesView,
  threatEventListView,
  threatEventView,
  threatLogView,
} from '../../src/canaries/threats.routes';
import type { publicKeyView } from '../../src/evidence/log/evidence-log';
import type { evidencePageView } from '../../src/evidence/records.routes';
import type { chainReportView, recordVerificationView } from '../../src/evidence/evidence.service';
import type { keyListView, keyView, newKeyView } from '../../src/keys/api-keys.routes';
import type { usageView } from '../../src/metering/usage.routes';
import type { accountListView, accountView } from '../../src/admin/admin.routes';
import type { indicatorListView } from '../../src/community/community.routes';
import type { dashboardView } from '../../src/dashboard/dashboard.routes';

type View<T extends z.ZodType> = z.output<T>;

export type Session = View<typeof sessionView>;
export type Account = View<typeof meView>;
export type Settings = View<typeof settingsView>;
export type Usage = View<typeof usageView>;

export type ApiKey = View<typeof keyView>;
export type NewKey = View<typeof newKeyView>;
export type KeyList = View<typeof keyListView>;

export type Channel = View<typeof channelView>;
export type ChannelList = View<typeof channelListView>;
export type DeliveryList = View<typeof deliveryListView>;
export type Delivery = DeliveryList['deliveries'][number];
export type Resent = View<typeof resendView>;
export type BulkResent = View<typeof bulkResendView>;
export type ChannelTest = View<typeof channelTestView>;
export type AlertEvent = NonNullable<Channel['events']>[number];
export type AlertLevel = NonNullable<Channel['minLevel']>;

/**
 * The event kinds, for the routing form: the bundle cannot import the server's list, so the
 * record's keys must name exactly the server's kinds or the type check fails.
 */
const ALERT_EVENT_SET: Record<AlertEvent, true> = {
  'canary.tripwire_triggered': true,
  'canary.test_alert': true,
};
export const ALERT_EVENTS = Object.keys(ALERT_EVENT_SET) as AlertEvent[];

export type Canary = View<typeof canaryView>;
export type CanaryList = View<typeof canaryListView>;
/** The kinds planted from the canaries page (rag markers are made by registering a document). */
export type CanaryKind = Exclude<Canary['kind'], 'rag_marker'>;

export type ThreatEvent = View<typeof threatEventView>;
export type ThreatEventPage = View<typeof threatEventListView>;
export type OpenStorms = View<typeof openStormsView>;
export type ThreatDeliveries = View<typeof threatDeliveriesView>;
export type ThreatHitPage = View<typeof threatLogView>;
export type ThreatHit = ThreatHitPage['hits'][number];

export type Dashboard = View<typeof dashboardView>;
export type CommunityIndicators = View<typeof indicatorListView>;
export type AdminAccount = View<typeof accountView>;
export type AdminAccountPage = View<typeof accountListView>;

export type EvidencePage = View<typeof evidencePageView>;
export type EvidenceRecord = EvidencePage['records'][number];
export type Verification = View<typeof recordVerificationView>;
export type ChainReport = View<typeof chainReportView>;
export type LogPublicKey = View<typeof publicKeyView>;
