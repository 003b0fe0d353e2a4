import type { Db } from 'mongodb';
import { UsersRepository } from '../../src/accounts/users.repository';
import type { jsonApi } from './json-api';

const PASSWORD = 'benchmark password 123';

export interface Webhook {
  name: string;
  url: string;
  secret: string;
}

/**
 * A new account on the enterprise plan (no limit gets in a benchmark's way) with one signed
 * webhook channel, made through the API at `call`: its id, and its session's headers for the calls
 * that follow.
 */
export async function accountWithWebhook(
  call: ReturnType<typeof jsonApi>,
  db: Db,
  webhook: Webhook,
) {
  const body = JSON.stringify({
    email: `${webhook.name}-${Date.now()}@example.com`,
    password: PASSWORD,
  });
  const { user_id: userId } = await call('/api/auth/signup', { method: 'POST', body });
  await new UsersRepository(db).setPlan(userId as string, 'enterprise', new Date());
  const { token } = await call('/api/auth/login', { method: 'POST', body });
  const auth = { authorization: `Bearer ${token as string}` };
  await call('/api/alert-channels', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ kind: 'webhook', ...webhook }),
  });
  return { auth, userId: userId as string };
}
