/**
 * What authentication costs: `POST /shield/inspect` served with no authentication (baseline), with
 * an API key (key lookup, scope gate, ownership check, audit-trail entry), and a session-token read
 * (`GET /api/users/me`), all against the same server process in one run.
 *
 *   npm run bench -- [--duration 10] [--connections 10] [--rounds 3]
 */
import { compare, post, report, withBenchServer } from './support/harness';

void withBenchServer(async ({ url, bareUrl }) => {
  const credentials = { email: 'bench@example.com', password: 'benchmark password' };
  const { user_id: userId } = await post(`${url}/api/auth/signup`, credentials);
  const { token } = await post(`${url}/api/auth/login`, credentials);
  const session = { authorization: `Bearer ${String(token)}` };
  const { key } = await post(`${url}/api/auth/generate-key`, { name: 'bench' }, session);
  const body = { user_id: userId, user_message: 'Summarise the attached quarterly report.' };

  report(
    await compare({
      'POST /shield/inspect, no auth (baseline)': {
        url: `${bareUrl}/shield/inspect`,
        method: 'POST',
        body,
      },
      'POST /shield/inspect, API key': {
        url: `${url}/shield/inspect`,
        method: 'POST',
        body,
        headers: { 'x-api-key': String(key) },
      },
      'GET /api/users/me, session token': { url: `${url}/api/users/me`, headers: session },
    }),
  );
}).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
