import cookieParser from 'cookie-parser';
import express, { Router, type Express, type RequestHandler } from 'express';
import { API, API_OPERATIONS } from './api';
import { AuthService } from './accounts/auth.service';
import { InvitesRepository } from './accounts/invites.repository';
import { LoginFailuresRepository } from './accounts/login-failures.repository';
import { KnownDevicesRepository } from './accounts/known-devices.repository';
import { FailureBudget, LoginThrottle } from './accounts/login-throttle';
import { PasswordHasher } from './accounts/passwords';
import { SessionsRepository } from './accounts/sessions.repository';
import { isOperator, UsersRepository } from './accounts/users.repository';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import type { Database } from './db/mongo';
import { ALL_INDEXES } from './db/indexes';
import { ChannelsRepository } from './alerts/channels.repository';
import { ChannelTestSlots } from './alerts/channel-test-slots';
import { DeliveriesRepository } from './alerts/deliveries.repository';
import { AgentsRepository } from './agent/agents.repository';
import { AuditTrail } from './evidence/trail/audit-trail';
import { CanariesRepository } from './canaries/canaries.repository';
import type { DecoySettings } from './canaries/decoys';
import { EvidenceBoundRemoval } from './canaries/evidence-bound-removal';
import { LiveFeed } from './canaries/live-feed';
import { DEFAULT_LIVE_STREAM_SETTINGS } from './canaries/live-stream';
import { ThreatsRepository } from './canaries/threats.repository';
import { TrapsRepository } from './honeypot/traps.repository';
import { DocumentsRepository } from './rag/documents.repository';
import { foreignCredentialTripwire, presenterOf } from './canaries/tripwire.routes';
import { DEFAULT_JOURNAL_TIMINGS } from './canaries/hit-journal';
import { wireguardPublicKey } from './canaries/listeners/wireguard';
import { Tripwires } from './canaries/tripwires';
import { AuditTrailWriter } from './evidence/trail/audit-trail.writer';
import { consoleRoutes } from './console/console.routes';
import { receiverPackageRoutes } from './alerts/receiver-package.routes';
import { EvidenceRepository } from './evidence/evidence.repository';
import { EvidenceService } from './evidence/evidence.service';
import { EvidenceStore } from './evidence/evidence.store';
import { EvidenceLog } from './evidence/log/evidence-log';
import { parseWitnesses } from './evidence/log/witnesses';
import type { Checkpoints } from './evidence/log/checkpoints';
import { generateSigner, type NoteSigner } from './evidence/log/signed-note';
import { errorHandler, notFoundHandler } from './http/errors';
import { apiKeyLayer, requireApiKey, type RefusedCredential } from './auth/api-key-auth';
import { jsonBodiesOnly } from './http/json-body';
import { bindAll, mountOperations, type Auth } from './http/operation';
import { requireSession, requireSessionOrApiKey } from './auth/session-auth';
import { securityHeaders } from './http/security-headers';
import { hashesDeps } from './evidence/hashes.routes';
import { Resends } from './alerts/resends';
import { operatorToken } from './auth/operator-token';
import { requestLogging } from './http/request-logging';
import { requestMetrics } from './http/request-metrics';
import { requestTracing } from './http/request-tracing';
import { openApiDocument } from './openapi/document';
import { referencePage } from './openapi/reference-page';
import { ApiKeysRepository } from './keys/api-keys.repository';
import { ApiKeysService } from './keys/api-keys.service';
import type { Logger } from './logger';
import { MongoCounterStore, type CounterStore } from './metering/counters.repository';
import { Meter } from './metering/meter';
import { metered } from './metering/metered';
import { PlanLookup } from './metering/plan-lookup';
import type { PlanLimits } from './metering/plan-limits';
import { ShieldInspector } from './shield/shield.service';
import type { Temporal } from './temporal/client';
import { DEFAULT_RECONCILER_SETTINGS, StartReconciler } from './temporal/start-reconciler';
import { WorkflowRuns } from './workflow-runs/workflow-runs';
import { Dashboard } from './dashboard/dashboard';
import { CommunityIndicators } from './community/community-indicators';
import { AdminService } from './admin/admin.service';
import { PrivacyExport } from './privacy/privacy-export';
import { WeeklySettingsRepository } from './weekly/weekly-settings.repository';
import { deleteWeeklySchedule } from './weekly/weekly-schedules';
import { PrivacyErasure } from './privacy/privacy-erase';
import { DataKeys } from './evidence/data-keys';

export interface AppDeps {
  config: Config;
  logger: Logger;
  mongo: Database;
  temporal: Temporal;
  clock?: Clock;
  /** Tests and benchmarks swap these; production uses the plan table and MongoDB counters. */
  planLimits?: PlanLimits;
  counters?: CounterStore;
  /** Signs the evidence log's checkpoints (main.ts loads it); tests get a throw-away key. */
  signer?: NoteSigner;
}

const HOUR_MS = 3_600_000;

/** Where planted decoys point: the public tripwire listener, the decoy zone, mail and database. */
export function decoySettings(config: Config): DecoySettings {
  return {
    publicBaseUrl: config.PUBLIC_TRIPWIRE_URL ?? config.PUBLIC_BASE_URL,
    decoyEmailDomain: config.DECOY_EMAIL_DOMAIN,
    dnsDomain: config.CANARY_DNS_DOMAIN,
    publicHost: config.PUBLIC_HOST,
    postgresPort: config.DECOY_POSTGRES_PORT || 5432,
    ...(config.WIREGUARD_PRIVATE_KEY && {
      wireguard: {
        publicKey: wireguardPublicKey(config.WIREGUARD_PRIVATE_KEY),
        port: config.WIREGUARD_PORT || 51820,
      },
    }),
  };
}

export interface Api {
  app: Express;
  /** Canary hits, for the decoy mail listener the entry point starts beside the app. */
  tripwires: Tripwires;
  /** The canaries, for what the public tripwire listener answers (redirects, web images). */
  canaries: CanariesRepository;
  /** The shield's inspection, for the benchmark's unauthenticated baseline. */
  shield: ShieldInspector;
  /** The evidence log's checkpoints: the entry point issues them on a timer. */
  checkpoints: Checkpoints;
  /** Starts the workflows whose start Temporal missed; the entry point runs it (tests call a pass). */
  reconciler: StartReconciler;
  /** Account erasures: the entry point finishes those a crash left part-way. */
  erasure: PrivacyErasure;
  /** Ends the live streams, which would otherwise hold a stopping server open. */
  endStreams(): void;
  /** Writes what background writers still hold (key-use audit trail, tripwire hits): call on shutdown. */
  flush(): Promise<void>;
}

/**
 * What every request passes through before any route or credential check: logging, security
 * headers, tracing, metrics, JSON bodies, cookies, the console's files and the receivers' package.
 */
export function httpStack(config: Config, logger: Logger): RequestHandler[] {
  return [
    requestLogging(logger),
    securityHeaders(),
    requestTracing,
    requestMetrics,
    jsonBodiesOnly,
    express.json({ limit: config.BODY_LIMIT }),
    cookieParser(),
    consoleRoutes(config.CONSOLE_DIR),
    receiverPackageRoutes(),
  ];
}

/** Builds the HTTP app without listening, so tests can serve it on port 0. */
export function createApp({
  config,
  logger,
  mongo,
  temporal,
  clock = systemClock,
  planLimits = config.plans.limits,
  counters = new MongoCounterStore(mongo.db),
  signer = generateSigner('tripwire.test/evidence').signer,
}: AppDeps): Api {
  const users = new UsersRepository(mongo.db);
  const auth = new AuthService({
    users,
    sessions: new SessionsRepository(mongo.db),
    invites: new InvitesRepository(mongo.db),
    hasher: new PasswordHasher({ concurrency: config.PASSWORD_HASHING_CONCURRENCY }),
    throttle: new LoginThrottle(
      new LoginFailuresRepository(mongo.db),
      new KnownDevicesRepository(mongo.db),
      new FailureBudget(config.LOGIN_FAILURES_PER_MINUTE, clock),
      clock,
    ),
    clock,
    sessionTtlMs: config.SESSION_TTL_HOURS * HOUR_MS,
    refreshTtlMs: config.REFRESH_TTL_DAYS * 24 * HOUR_MS,
    signupMode: config.SIGNUP_MODE,
    defaultPlan: config.plans.defaultPlan,
  });
  // One store per process, so every evidence append of an account shares one group commit.
  const log = new EvidenceLog(mongo.db, signer, clock, {
    witnesses: parseWitnesses(config.EVIDENCE_WITNESSES),
    log: logger,
  });
  const dataKeys = new DataKeys(mongo.db);
  const store = new EvidenceStore(mongo.db, clock, log.leaves, dataKeys);
  const evidence = new EvidenceRepository(mongo.db, dataKeys);
  const erasure = new PrivacyErasure({
    db: mongo.db,
    users,
    auth,
    keys: dataKeys,
    evidence,
    store,
    clock,
    logger,
    forgetSchedules: (accountId) => deleteWeeklySchedule(temporal, accountId),
  });
  const evidenceService = new EvidenceService(evidence, log);
  const audit = new AuditTrail(store, evidence);
  const trail = new AuditTrailWriter(audit, logger);
  const meter = new Meter({
    counters,
    limits: planLimits,
    upgradeUrl: config.plans.upgradeUrl,
    clock,
    log: logger,
  });
  const plans = new PlanLookup(users);
  const meterPlant = metered(meter, plans, 'canary_plants');

  const canaries = new CanariesRepository(mongo.db);
  const threats = new ThreatsRepository(mongo.db);
  const agents = new AgentsRepository(mongo.db);
  const gather = { quietMs: config.ALERT_GATHER_MS, maxMs: 30_000 };
  const tripwires = new Tripwires({
    canaries,
    threats,
    evidence: store,
    temporal,
    clock,
    log: logger,
    settings: {
      stormWindowMs: config.STORM_WINDOW_SECONDS * 1000,
      gather,
    },
    journal: { dir: config.TRIPWIRE_JOURNAL_DIR, ...DEFAULT_JOURNAL_TIMINGS },
  });
  const shield = new ShieldInspector({ tripwires, store, evidence, log });
  const removal = new EvidenceBoundRemoval({ canaries, threats, evidence, store, clock });
  const decoys = decoySettings(config);
  const refused: RefusedCredential = async (req, via, candidates) =>
    void (await tripwires.recordHit({ secrets: candidates, via, ...presenterOf(req) }));
  const session = requireSession(auth, refused);
  const sessionOrKey = requireSessionOrApiKey(auth, refused);
  const keys = new ApiKeysService({
    keys: new ApiKeysRepository(mongo.db),
    audit,
    clock,
    isOperator: async (accountId) => isOperator(await users.findById(accountId)),
  });
  const deliveries = new DeliveriesRepository(mongo.db);
  const weekly = new WeeklySettingsRepository(mongo.db);
  const liveFeed = new LiveFeed(threats, logger);

  const docsToken = operatorToken(config.DOCS_TOKEN, 'DOCS_TOKEN');
  const document = openApiDocument(API_OPERATIONS, config.PUBLIC_BASE_URL);
  const operations = bindAll(API, {
    health: { db: mongo.db, indexes: ALL_INDEXES, temporal },
    metrics: { metricsToken: operatorToken(config.METRICS_TOKEN, 'METRICS_TOKEN') },
    reference: { document, page: referencePage(document), docsToken },
    auth: { auth, config, refused },
    users: { users, auth },
    settings: { users, clock },
    usage: { meter, plans },
    apiKeys: keys,
    canaries: { canaries, clock, decoys, meterPlant },
    threats: {
      threats,
      deliveries,
      feed: liveFeed,
      stream: DEFAULT_LIVE_STREAM_SETTINGS,
      stormWindowMs: config.STORM_WINDOW_SECONDS * 1000,
      clock,
    },
    tripwires: { tripwires, canaries },
    channels: {
      channels: new ChannelsRepository(mongo.db),
      testSlots: new ChannelTestSlots(mongo.db, config.CHANNEL_TEST_CONCURRENCY),
      deliveries,
      resends: new Resends(deliveries, temporal),
      temporal,
      clock,
      targets: {
        allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
        deny: config.OUTBOUND_DENY_CIDRS,
      },
    },
    trail: audit,
    records: { evidence, service: evidenceService },
    exports: { evidence, users, log, plans: config.plans, now: clock },
    chains: evidenceService,
    hashes: hashesDeps(evidenceService),
    log,
    tiles: log,
    shield: { inspector: shield, meterInspection: metered(meter, plans, 'shield_inspections') },
    honeypot: {
      traps: new TrapsRepository(mongo.db),
      canaries,
      threats,
      removal,
      decoys,
      clock,
      meterPlant,
    },
    rag: {
      documents: new DocumentsRepository(mongo.db),
      canaries,
      threats,
      tripwires,
      removal,
      decoys,
      clock,
      meterPlant,
    },
    agent: { agents, temporal, clock },
    workerPing: temporal,
    workflowRuns: new WorkflowRuns(temporal),
    dashboard: { dashboard: new Dashboard(mongo.db, new ChannelsRepository(mongo.db)), clock },
    weekly: { weekly, channels: new ChannelsRepository(mongo.db), temporal, clock },
    community: {
      indicators: new CommunityIndicators(mongo.db, users, config.COMMUNITY_MIN_WORKSPACES),
      clock,
    },
    admin: {
      admin: new AdminService({
        users,
        sessions: new SessionsRepository(mongo.db),
        keys: new ApiKeysRepository(mongo.db),
        meter,
        store,
        clock,
      }),
      users,
    },
    privacy: { exporter: new PrivacyExport(mongo.db, evidence), erasure, clock },
  });
  const authenticate: Record<Auth, RequestHandler[]> = {
    none: [],
    session: [session],
    apiKey: [requireApiKey],
    sessionOrApiKey: [sessionOrKey],
    refreshCookie: [],
  };
  // Before any credential check: health, metrics, the reference and the tripwires (which answer
  // as their decoys would, whatever headers come).
  const beforeKeyLayer = Router();
  mountOperations(
    beforeKeyLayer,
    operations.filter(({ op }) => op.beforeKeyLayer),
    authenticate,
  );
  const api = Router();
  mountOperations(
    api,
    operations.filter(({ op }) => !op.beforeKeyLayer),
    authenticate,
  );

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(...httpStack(config, logger));
  app.use(beforeKeyLayer);
  app.use(foreignCredentialTripwire(refused));
  app.use(apiKeyLayer({ keys, trail, clock, refused }));
  app.use(api);

  app.use(notFoundHandler);
  app.use(errorHandler);
  return {
    app,
    tripwires,
    canaries,
    shield,
    checkpoints: log.checkpoints,
    erasure,
    reconciler: new StartReconciler({
      threats,
      agents,
      weekly,
      temporal,
      clock,
      log: logger,
      settings: { ...DEFAULT_RECONCILER_SETTINGS, gather },
    }),
    endStreams: () => liveFeed.close(),
    flush: async () => {
      liveFeed.close();
      await tripwires.close();
      await trail.close();
    },
  };
}
