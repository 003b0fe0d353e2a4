import type { Express } from 'express';
import request from 'supertest';
import { alertPayloadSchema, type AlertPayload } from '../../src/alerts/payload';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { canaryView } from '../../src/canaries/canaries.routes';
import { threatLogView } from '../../src/canaries/threats.routes';
import { signUpAndLogIn, type SignedIn } from './accounts';
import { until } from './process-stack';
import type { Receiver } from './receiver';

const SECRET = 'canary-test-webhook-secret';

export const bearer = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

/** A new account's URL canary: its id, the path that fires it, and the account's bearer header. */
export async function plantUrlCanary(
  app: Express,
  memo: string,
): Promise<{ canaryId: string; path: string; auth: Record<string, string> }> {
  const auth = bearer(await signUpAndLogIn(app));
  const planted = await request(app)
    .post('/api/canaries')
    .set(auth)
    .send({ kind: 'url', memo })
    .expect(201);
  const { canary_id: canaryId, value } = planted.body as { canary_id: string; value: string };
  return { canaryId, path: new URL(value).pathname, auth };
}

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

    /**
     * A canary's hits once there are any: the alert goes out as soon as its event exists, while
     * the hits are still being sealed and logged (docs/canaries.md), so it can arrive a moment
     * before them.
     */
    async hitsOf(who: SignedIn, canaryId: string) {
      return until(
        `hits of ${canaryId} in the threat log`,
        async () => {
          const res = await request(app)
            .get(`/api/threat-log?canary_id=${canaryId}`)
            .set(bearer(who));
          const { hits } = threatLogView.parse(res.body);
          return hits.length ? hits : undefined;
        },
        15_000,
      );
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
