import type { SafeTarget } from '../address-safety';
import { httpAttempt, postOnce, type Attempt, type AttemptResult } from '../http-delivery';
import type { OutgoingPayload } from '../payload';

export const USER_AGENT = 'Service-Webhook/1.0';
/** Lets receivers drop a delivery they already have (a retry after a lost answer, a resend). */
export const DELIVERY_ID_HEADER = 'X-Service-Delivery';

/** One alert on its way to one channel, as every attempt sends it. */
export interface OutgoingAlert {
  payload: OutgoingPayload;
  /** The delivery id receivers see: the same on every attempt and on a resend. */
  deliveryId: string;
  /** When this attempt is sent: signatures and their timestamps are made with it. */
  now: Date;
}

/**
 * One channel kind: how an alert looks to its receiver (`render`), one attempt to send it
 * (`send`), and what the answer means (`classify`: delivered, retry, give up).
 */
export interface ChannelProvider<To, Message, Answer> {
  render(alert: OutgoingAlert, to: To): Message;
  send(message: Message, to: To): Promise<Answer>;
  classify(answer: Answer): Attempt;
}

/** Channels an account configures with a URL (and, for some kinds, a secret). */
export interface HttpChannelSettings {
  secret: string | null;
  /** Generic webhooks: also send the Standard Webhooks headers. */
  standardWebhooks?: boolean;
  /** Generic webhooks, during a rotation's overlap: the secret being replaced, still signed for. */
  previousSecret?: string | null;
}

export interface HttpMessage {
  body: string;
  headers: Record<string, string>;
  /**
   * Sent to this path on the channel's own host (the address already checked) instead of the
   * channel's URL: a PagerDuty test goes to the change events endpoint beside the alert one.
   */
  path?: string;
}

export type HttpTo = HttpChannelSettings & { target: SafeTarget };

export interface HttpChannelProvider extends ChannelProvider<HttpTo, HttpMessage, AttemptResult> {
  /** Rendering needs only the channel's settings, so requests can be rendered before any lookup. */
  render(alert: OutgoingAlert, channel: HttpChannelSettings): HttpMessage;
  /** `required`: the channel needs one (a signing key, a routing key); `none`: it may not have one. */
  secret: 'required' | 'none';
  /** What the secret is to the receiver, for error messages and the console. */
  secretLabel?: string;
}

/** The headers every HTTP kind sends. */
export function commonHeaders(alert: OutgoingAlert): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [DELIVERY_ID_HEADER]: alert.deliveryId,
  };
}

/**
 * An HTTP kind from its rendering: sent once to the checked address (redirects never followed)
 * and classified by the spec's status table.
 */
export function httpProvider(
  spec: Pick<HttpChannelProvider, 'secret' | 'secretLabel' | 'render'> &
    Partial<Pick<HttpChannelProvider, 'classify'>>,
): HttpChannelProvider {
  return {
    send: (message, to) =>
      postOnce(
        message.path ? { ...to.target, url: new URL(message.path, to.target.url) } : to.target,
        message.body,
        message.headers,
      ),
    classify: httpAttempt,
    ...spec,
  };
}
