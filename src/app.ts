import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import { AuthService } from './accounts/auth.service';
import { InvitesRepository } from './accounts/invites.repository';
import { LoginFailuresRepository } from './accounts/login-failures.repository';
import { KnownDevicesRepository } from './accounts/known-devices.repository';
import { FailureBudget, LoginThrottle } from './accounts/login-throttle';
import { PasswordHasher } from './accounts/passwords';
import { authRoutes } from './accounts/auth.routes';
import { settingsRoutes } from './accounts/settings.routes';
import { SessionsRepository } from './accounts/sessions.repository';
import { usersRoutes } from './accounts/users.routes';
import { UsersRepository } from './accounts/users.repository';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import type { Database } from './db/mongo';
import { ALL_INDEXES } from './db/indexes';
import { ChannelsRepository } from './alerts/channels.repository';
import { ChannelTestSlots } from './alerts/channel-test-slots';
import { channelsRoutes } from './alerts/channels.routes';
import { DeliveriesRepository } from './alerts/deliveries.repository';
import { agentRoutes } from './agent/agent.routes';
import { AgentsRepository } from './agent/agents.repository';
import { AuditTrail } from './audit/audit-trail';
import { CanariesRepository } from './canaries/canaries.repository';
import { canariesRoutes } from './canaries/canaries.routes';
import type { DecoySettings } from './canaries/decoys';
import { EvidenceBoundRemoval } from './canaries/evidence-bound-removal';
import { ThreatsRepository } from './canaries/threats.repository';
import { honeypotRoutes } from './honeypot/honeypot.routes';
import { TrapsRepository } from './honeypot/traps.repository';
import { DocumentsRepository } from './rag/documents.repository';
import { ragRoutes } from './rag/rag.routes';
import { threatRoutes } from './canaries/threats.routes';
import { foreignCredentialTripwire, presenterOf, tripwireRoutes } from './canaries/tripwire.routes';
import { Tripwires } from './canaries/tripwires';
import { AuditTrailWriter } from './audit/audit-trail.writer';
import { auditRoutes } from './audit/audit.routes';
import { workerPingRoutes } from './diagnostics/worker-ping.routes';
import { consoleRoutes } from './console/console.routes';
import { consoleEvidenceRoutes } from './evidence/console-evidence.routes';
import { EvidenceRepository } from './evidence/evidence.repository';
import { evidenceRoutes } from './evidence/evidence.routes';
import { EvidenceService } from './evidence/evidence.service';
import { EvidenceStore } from './evidence/evidence.store';
import { EvidenceLog } from './evidence/evidence-log';
import type { Checkpoints } from './evidence/checkpoints';
import { logRoutes } from './evidence/log.routes';
import { generateSigner, type NoteSigner } from './evidence/signed-note';
import { publicVerifyRoutes } from './evidence/public-verify.routes';
import { healthRoutes } from './health/health.routes';
import { errorHandler, notFoundHandler } from './http/errors';
import { jsonBodiesOnly } from './http/json-body';
import { operatorToken } from './http/operator-token';
import { REFERENCE_PAGE_POLICY, securityHeaders } from './http/security-headers';
import { requestLogging } from './http/request-logging';
import { requestMetrics } from './http/request-metrics';
import { requestTracing } from './http/request-tracing';
import { metricsHandler } from './metrics';
import { openApiDocument } from './openapi/document';
import { referencePage } from './openapi/reference-page';
import { apiKeyLayer, type RefusedCredential } from './http/api-key-auth';
import { requireSession, requireSessionOrApiKey } from './http/session-auth';
import { ApiKeysRepository } from './keys/api-keys.repository';
import { apiKeysRoutes } from './keys/api-keys.routes';
import { ApiKeysService } from './keys/api-keys.service';
import type { Logger } from './logger';
import { MongoCounterStore, type CounterStore } from './metering/counters.repository';
import { Meter } from './metering/meter';
import { metered, PlanLookup } from './metering/metered';
import { PLAN_LIMITS, type PlanLimits } from './metering/plan-limits';
import { usageRoutes } from './metering/usage.routes';
import { shieldRoutes } from './shield/shield.routes';
import { ShieldInspector } from './shield/shield.service';
import type { Temporal } from './temporal/client';
import { DEFAULT_RECONCILER_SETTINGS, StartReconciler } from './temporal/start-reconciler';

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
  };
}

export interface Api {
  app: Express;
  /** Canary hits, for the decoy mail listener the entry point starts beside the app. */
  tripwires: Tripwires;
  /** The shield's inspection, for the benchmark's unauthenticated baseline. */
  shield: ShieldInspector;
  /** The evidence log's checkpoints: the entry point issues them on a timer. */
  checkpoints: Checkpoints;
  /** Starts the workflows whose start Temporal missed; the entry point runs it (tests call a pass). */
  reconciler: StartReconciler;
  /** Writes what background writers still hold (key-use audit trail, tripwire hits): call on shutdown. */
  flush(): Promise<void>;
}

/** Builds the HTTP app without listening, so tests can serve it on port 0. */
export function createApp({
  config,
  logger,
  mongo,
  temporal,
  clock = systemClock,
  planLimits = PLAN_LIMITS,
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
  });
  // One store per process, so every evidence append of an account shares one group commit.
  const log = new EvidenceLog(mongo.db, signer, clock);
  const store = new EvidenceStore(mongo.db, clock, log.leaves);
  const evidence = new EvidenceRepository(mongo.db);
  const evidenceService = new EvidenceService(evidence, log);
  const audit = new AuditTrail(store, evidence);
  const trail = new AuditTrailWriter(audit, logger);
  const meter = new Meter({ counters, limits: planLimits, clock, log: logger });
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
  });
  const shield = new ShieldInspector({ tripwires, store, evidence });
  const removal = new EvidenceBoundRemoval({ canaries, threats, evidence, store, clock });
  const decoys = decoySettings(config);
  const refused: RefusedCredential = async (req, via, candidates) =>
    void (await tripwires.recordHit({ secrets: candidates, via, ...presenterOf(req) }));
  const session = requireSession(auth, refused);
  const sessionOrKey = requireSessionOrApiKey(auth, refused);
  const keys = new ApiKeysService({ keys: new ApiKeysRepository(mongo.db), audit, clock });

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(requestLogging(logger));
  app.use(securityHeaders());
  app.use(requestTracing);
  app.use(requestMetrics);
  app.use(jsonBodiesOnly);
  app.use(express.json({ limit: config.BODY_LIMIT }));
  app.use(cookieParser());

  app.get('/metrics', operatorToken(config.METRICS_TOKEN, 'METRICS_TOKEN'), metricsHandler);
  const docsToken = operatorToken(config.DOCS_TOKEN, 'DOCS_TOKEN');
  const reference = openApiDocument(config.PUBLIC_BASE_URL);
  app.get('/openapi.json', docsToken, (_req, res) => void res.json(reference));
  const referenceHtml = referencePage(reference);
  app.get('/docs', docsToken, (_req, res) => {
    res.set('Content-Security-Policy', REFERENCE_PAGE_POLICY).type('html').send(referenceHtml);
  });
  app.use(consoleRoutes(config.CONSOLE_DIR));
  app.use(healthRoutes({ db: mongo.db, indexes: ALL_INDEXES, temporal }));
  // Before any credential check: a tripwire answers as its decoy would, whatever headers come.
  app.use(tripwireRoutes(tripwires));
  app.use(foreignCredentialTripwire(refused));
  app.use(apiKeyLayer({ keys, trail, clock, refused }));

  app.use('/api/auth', authRoutes(auth, config, refused));
  app.use('/api/auth', session, apiKeysRoutes(keys));
  app.use('/api/audit', session, auditRoutes(audit, evidenceService));
  app.use(
    '/api/audit',
    session,
    consoleEvidenceRoutes({ evidence, service: evidenceService, users, log, clock }),
  );
  app.use('/api/users', session, usersRoutes(users, auth));
  app.use('/api/settings', sessionOrKey, settingsRoutes(users, clock));
  app.use('/api/canaries', sessionOrKey, canariesRoutes({ canaries, clock, decoys, meterPlant }));
  app.use('/api', threatRoutes(threats, sessionOrKey));
  app.use('/api/diagnostics', session, workerPingRoutes(temporal));
  app.use('/api/verify', publicVerifyRoutes(evidenceService));
  app.use('/api/log', logRoutes(log));
  app.use('/audit', evidenceRoutes({ evidence, service: evidenceService, users, log, clock }));
  app.use('/api/usage', session, usageRoutes(meter, plans));
  app.use(
    '/api/alert-channels',
    session,
    channelsRoutes({
      channels: new ChannelsRepository(mongo.db),
      testSlots: new ChannelTestSlots(mongo.db, config.CHANNEL_TEST_CONCURRENCY),
      deliveries: new DeliveriesRepository(mongo.db),
      temporal,
      clock,
      targets: { allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS },
    }),
  );
  app.use('/shield', shieldRoutes(metered(meter, plans, 'shield_inspections'), shield));
  app.use(
    '/honeypot',
    sessionOrKey,
    honeypotRoutes({
      traps: new TrapsRepository(mongo.db),
      canaries,
      threats,
      removal,
      decoys,
      clock,
      meterPlant,
    }),
  );
  app.use('/agent', sessionOrKey, agentRoutes({ agents, temporal, clock }));
  app.use(
    '/rag',
    sessionOrKey,
    ragRoutes({
      documents: new DocumentsRepository(mongo.db),
      canaries,
      threats,
      tripwires,
      removal,
      decoys,
      clock,
      meterPlant,
    }),
  );

  app.use(notFoundHandler);
  app.use(errorHandler);
  return {
    app,
    tripwires,
    shield,
    checkpoints: log.checkpoints,
    reconciler: new StartReconciler({
      threats,
      agents,
      temporal,
      clock,
      log: logger,
      settings: { ...DEFAULT_RECONCILER_SETTINGS, gather },
    }),
    flush: async () => {
      await tripwires.flush();
      await trail.close();
    },
  };
}
