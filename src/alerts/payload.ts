import { z } from 'zod';

/** Webhook payload, schema version 1 (the spec's "Payload" tables), checked before every send. */
export const ALERT_EVENTS = ['canary.tripwire_triggered', 'canary.test_alert'] as const;
export const ALERT_LEVELS = ['CRITICAL', 'HIGH', 'MEDIUM'] as const;

export type AlertEvent = (typeof ALERT_EVENTS)[number];
export type AlertLevel = (typeof ALERT_LEVELS)[number];

const isoInstant = z.iso.datetime();
const place = { ip: z.string(), country: z.string(), city: z.string(), org: z.string() };

/** Who fired a canary, as enrichment found them; also shown on threat events. */
export const attackerSchema = z
  .object({
    ...place,
    type: z.string(),
    abuseScore: z.number().int().min(0).max(100).nullable(),
  })
  .strict();
/** The server that delivered mail to a decoy address (the sender's provider). */
export const mailServerSchema = z.object(place).strict();

export const alertPayloadSchema = z
  .object({
    version: z.literal('1'),
    event: z.enum(ALERT_EVENTS),
    sentAt: isoInstant,
    data: z
      .object({
        event: z.enum(ALERT_EVENTS),
        alertLevel: z.enum(ALERT_LEVELS),
        platform: z.string(),
        /** The owner's memo from planting ("prod .env on build box"): says which decoy leaked. */
        memo: z.string().optional(),
        /** The canary's kind, or `agent` for an agent alert. */
        canaryKind: z.string().optional(),
        /** What happened, for headlines: "canary fired", "agent went silent", "agent skill blocked". */
        summary: z.string().optional(),
        canaryId: z.string(),
        canaryAgeDays: z.number().int().min(0),
        attacker: attackerSchema,
        /** Only when a decoy email address fired: the sender's mail provider, never to be blocked. */
        mailServer: mailServerSchema.optional(),
        /** Only when a DNS canary fired: the resolver that asked, never the attacker. */
        resolver: mailServerSchema.optional(),
        riskScore: z.number().int().min(0).max(100),
        riskLevel: z.string(),
        interpretation: z.string(),
        threatEventId: z.string().nullable(),
        triggeredAt: isoInstant,
        test: z.literal(true).optional(),
      })
      .strict(),
  })
  .strict()
  .superRefine(({ event, data }, ctx) => {
    const issue = (path: string[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });
    if (data.event !== event) issue(['data', 'event'], 'must equal the top-level event');
    const isTest = event === 'canary.test_alert';
    if (isTest !== (data.test === true))
      issue(['data', 'test'], 'present, and true, exactly on test alerts');
    if (isTest && data.threatEventId !== null)
      issue(['data', 'threatEventId'], 'null on test alerts');
    if (data.mailServer && data.attacker.ip !== '') {
      issue(['data', 'attacker', 'ip'], 'empty when a decoy email address fired');
    }
    if (data.resolver && data.attacker.ip !== '') {
      issue(['data', 'attacker', 'ip'], 'empty when a DNS canary fired');
    }
  });

export type AlertPayload = z.infer<typeof alertPayloadSchema>;

/** A fired canary's (or watched agent's) alert: the v1 envelope around its data, validated. */
export function tripwireAlertPayload(
  sentAt: Date,
  data: Omit<AlertPayload['data'], 'event' | 'test'>,
): AlertPayload {
  const event = 'canary.tripwire_triggered';
  return alertPayloadSchema.parse({
    version: '1',
    event,
    sentAt: sentAt.toISOString(),
    data: { event, ...data },
  });
}

/** The synthetic alert a channel test sends: clearly a test, never an incident. */
export function testAlertPayload(now: Date): AlertPayload {
  const at = now.toISOString();
  return {
    version: '1',
    event: 'canary.test_alert',
    sentAt: at,
    data: {
      event: 'canary.test_alert',
      alertLevel: 'MEDIUM',
      platform: 'channel test',
      memo: '',
      summary: 'channel test',
      canaryId: 'test',
      canaryAgeDays: 0,
      attacker: { ip: '', country: '', city: '', org: '', type: 'unknown', abuseScore: null },
      riskScore: 0,
      riskLevel: 'none',
      interpretation: 'Test alert sent from the channel settings. No canary fired; nothing to do.',
      threatEventId: null,
      triggeredAt: at,
      test: true,
    },
  };
}

/**
 * Not an alert but a notice about the account's own channels: sent when a channel was disabled
 * because its deliveries kept failing (`CHANNEL_DISABLE_AFTER`). Its own schema beside the v1
 * alert payloads, which stay as the spec has them; `threatEventId` is always null.
 */
export const CHANNEL_DISABLED_EVENT = 'channel.disabled';

export const channelDisabledPayloadSchema = z
  .object({
    version: z.literal('1'),
    event: z.literal(CHANNEL_DISABLED_EVENT),
    sentAt: isoInstant,
    data: z
      .object({
        event: z.literal(CHANNEL_DISABLED_EVENT),
        channelId: z.string(),
        channelKind: z.string(),
        channelName: z.string(),
        reason: z.string(),
        disabledAt: isoInstant,
        /** The first failure since the channel last delivered (or was enabled). */
        failingSince: isoInstant,
        lastDeliveryAt: isoInstant.nullable(),
        lastError: z
          .object({ message: z.string(), status: z.number().int().nullable() })
          .nullable(),
        threatEventId: z.null(),
      })
      .strict(),
  })
  .strict();

export type ChannelDisabledPayload = z.infer<typeof channelDisabledPayloadSchema>;

/** Whatever goes out to a channel: an alert (the spec's v1 payloads) or a notice. */
export type OutgoingPayload = AlertPayload | ChannelDisabledPayload;

export const isChannelNotice = (payload: OutgoingPayload): payload is ChannelDisabledPayload =>
  payload.event === CHANNEL_DISABLED_EVENT;

/** Checks an outgoing payload against its event's schema. */
export function parseOutgoing(json: unknown) {
  const event = (json as { event?: unknown } | null)?.event;
  return event === CHANNEL_DISABLED_EVENT
    ? channelDisabledPayloadSchema.safeParse(json)
    : alertPayloadSchema.safeParse(json);
}
