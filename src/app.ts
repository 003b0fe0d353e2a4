import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import { AuthService } from './accounts/auth.service';
import { authRoutes } from './accounts/auth.routes';
import { SessionsRepository } from './accounts/sessions.repository';
import { usersRoutes } from './accounts/users.routes';
import { UsersRepository } from './accounts/users.repository';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import type { Database } from './db/mongo';
import { ALL_INDEXES } from './db/indexes';
import { workerPingRoutes } from './diagnostics/worker-ping.routes';
import { healthRoutes } from './health/health.routes';
import { errorHandler, notFoundHandler } from './http/errors';
import { requestLogging } from './http/request-logging';
import { requireSession } from './http/session-auth';
import type { Logger } from './logger';
import type { Temporal } from './temporal/client';

export interface AppDeps {
  config: Config;
  logger: Logger;
  mongo: Database;
  temporal: Temporal;
  clock?: Clock;
}

const HOUR_MS = 3_600_000;

/** Builds the HTTP app without listening, so tests can serve it on port 0. */
export function createApp({
  config,
  logger,
  mongo,
  temporal,
  clock = systemClock,
}: AppDeps): Express {
  const users = new UsersRepository(mongo.db);
  const auth = new AuthService({
    users,
    sessions: new SessionsRepository(mongo.db),
    clock,
    sessionTtlMs: config.SESSION_TTL_HOURS * HOUR_MS,
    refreshTtlMs: config.REFRESH_TTL_DAYS * 24 * HOUR_MS,
  });
  const session = requireSession(auth);

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(requestLogging(logger));
  app.use(express.json({ limit: config.BODY_LIMIT }));
  app.use(cookieParser());

  app.use(healthRoutes({ db: mongo.db, indexes: ALL_INDEXES, temporal }));
  app.use('/api/auth', authRoutes(auth, config));
  app.use('/api/users', session, usersRoutes(users));
  app.use('/api/diagnostics', session, workerPingRoutes(temporal));

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
