import type { Express } from 'express';
import request from 'supertest';
import { alertPayloadSchema, type AlertPayload } from '../../src/alerts/payload';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { canaryView } from '../../src/canaries/canaries.routes';
import { signUpAndLogIn, type SignedIn } from './accounts';
import type { Receiver } from './receiver';

const SECRET = 'canary-test-webhook-secret';

export const bearer = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

/** Accounts whose alerts go, through a signed webhook, to their own path on an HTTPS receiver. */
export function canaryAccounts(app: Express, receiver: Receiver) {
  return {
    async account() {
      const who = await signUpAndLogIn(app);
      const path = `/alerts/${who.userId}`;
      const res = await request(app)
        .post('/api/alert-channels')
        .set(bearer(who))
        .send({ kind: 'webhook', name: 'hook', url: receiver.url(path), secret: SECRET });
      if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
      return { who, path };
    },

    async plant(who: SignedIn, kind: string, extra: object = {}) {
      const res = await request(app)
        .post('/api/canaries')
        .set(bearer(who))
        .send({ kind, memo: `${kind} in the test`, ...extra });
      if (res.status !== 201) throw new Error(`plant: ${res.status} ${res.text}`);
      return canaryView.parse(res.body);
    },

    /** The alerts at a receiver path, each with its signature verified, once `count` arrived. */
    async alertsAt(path: string, count = 1, timeoutMs = 30_000): Promise<AlertPayload[]> {
      const hits = await receiver.waitFor(path, count, timeoutMs);
      return hits.map((h) => {
        const check = verifyWebhookSignature(SECRET, {
          rawBody: h.rawBody,
          timestamp: h.headers['x-service-timestamp'] as string,
          signature: h.headers['x-service-signature'] as string,
        });
        if (!check.ok) throw new Error(`alert signature refused: ${JSON.stringify(check)}`);
        return alertPayloadSchema.parse(JSON.parse(h.rawBody.toString()));
      });
    },
  };
}
