/**
 * What authentication and metering cost on `POST /shield/inspect`, all in one server process and
 * one run: no authentication and no meters (baseline); the same behind the app's HTTP stack
 * (logging, security headers, tracing, metrics, cookies), still without credentials; an API key
 * (key lookup, scope gate, ownership check, audit-trail entry) with meters that count nothing;
 * the same with the three MongoDB meters (burst, month, day); and a session-token read
 * (`GET /api/users/me`).
 *
 * Routes take turns round by round until resolved, with the CPU per request of the server, its
 * database and this process (the load's client): bench/support/rounds.ts.
 *
 *   npm run bench -- [--duration 5] [--connections 10] [--min-rounds 5] [--max-rounds 15]
 */
import { compare, post, report, withBenchServer } from './support/harness';

void withBenchServer(async ({ url, bareUrl, stackedUrl, unmeteredUrl, cpu }) => {
  const credentials = { email: 'bench@example.com', password: 'benchmark password' };
  const { user_id: userId } = await post(`${url}/api/auth/signup`, credentials);
  const { token } = await post(`${url}/api/auth/login`, credentials);
  const session = { authorization: `Bearer ${String(token)}` };
  const { key } = await post(`${url}/api/auth/generate-key`, { name: 'bench' }, session);
  const body = { user_id: userId, user_message: 'Summarise the attached quarterly report.' };

  report(
    await compare(
      {
        'POST /shield/inspect, no auth (baseline)': {
          url: `${bareUrl}/shield/inspect`,
          method: 'POST',
          body,
        },
        "POST /shield/inspect, the app's HTTP stack, no auth": {
          url: `${stackedUrl}/shield/inspect`,
          method: 'POST',
          body,
        },
        'POST /shield/inspect, API key, meters off': {
          url: `${unmeteredUrl}/shield/inspect`,
          method: 'POST',
          body,
          headers: { 'x-api-key': String(key) },
        },
        'POST /shield/inspect, API key and the three meters': {
          url: `${url}/shield/inspect`,
          method: 'POST',
          body,
          headers: { 'x-api-key': String(key) },
        },
        'GET /api/users/me, session token': { url: `${url}/api/users/me`, headers: session },
      },
      cpu,
    ),
  );
}).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
