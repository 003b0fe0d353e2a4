import { z } from 'zod';

/** Webhook payload, schema version 1 (the spec's "Payload" tables), checked before every send. */
export const ALERT_EVENTS = ['canary.tripwire_triggered', 'canary.test_alert'] as const;
/**
 * The account's weekly digest: a report, never an alert, so it has its own data (below). Channels
 * do not subscribe to it (`ALERT_EVENTS` are what they route); it goes to the channels its
 * settings choose.
 */
export const WEEKLY_DIGEST_EVENT = 'account.weekly_digest';
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

const count = z.number().int().min(0);
/** A count under a key (a day, a country, an outcome), most first unless said otherwise. */
const keyedCount = z.object({ key: z.string(), count }).strict();

/**
 * The weekly digest, in the same v1 envelope as alerts: what fired in the week (`from` to `to`),
 * by canary and by day in the account's time zone, where it came from, and whether anyone was
 * told. `threatEventId` is null: it reports on many events, as a test alert reports on none.
 */
export const weeklyDigestPayloadSchema = z
  .object({
    version: z.literal('1'),
    event: z.literal(WEEKLY_DIGEST_EVENT),
    sentAt: isoInstant,
    data: z
      .object({
        event: z.literal(WEEKLY_DIGEST_EVENT),
        accountId: z.string(),
        from: isoInstant,
        to: isoInstant,
        /** The IANA time zone the days (`byDay` keys, `YYYY-MM-DD`) are counted in. */
        timeZone: z.string(),
        totalHits: count,
        /** Every canary hit in the week, most hit first, each with its hits by day (oldest first). */
        canaries: z.array(
          z
            .object({
              canaryId: z.string(),
              kind: z.string(),
              memo: z.string(),
              hits: count,
              byDay: z.array(keyedCount),
            })
            .strict(),
        ),
        /** Threat events of the week by the attacker's country (`unknown` when not found). */
        sourcesByCountry: z.array(keyedCount),
        /** The week's deliveries by outcome (`in_progress` until one ends). */
        deliveriesByOutcome: z.array(keyedCount),
        /** Channels whose latest delivery failed, with the week's failed deliveries to each. */
        stillFailing: z.array(
          z
            .object({
              channelId: z.string(),
              name: z.string(),
              kind: z.string(),
              lastError: z.string(),
              lastErrorAt: isoInstant,
              failedThisWeek: count,
            })
            .strict(),
        ),
        threatEventId: z.null(),
      })
      .strict(),
  })
  .strict();

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

export type WeeklyDigestPayload = z.infer<typeof weeklyDigestPayloadSchema>;
export type ChannelDisabledPayload = z.infer<typeof channelDisabledPayloadSchema>;

/** Anything a channel is sent: an alert (the spec's two events), the weekly digest or a notice. */
export type EventPayload = AlertPayload | WeeklyDigestPayload | ChannelDisabledPayload;

export const isWeeklyDigest = (payload: EventPayload): payload is WeeklyDigestPayload =>
  payload.event === WEEKLY_DIGEST_EVENT;

export const isChannelNotice = (payload: EventPayload): payload is ChannelDisabledPayload =>
  payload.event === CHANNEL_DISABLED_EVENT;

/** Checks a payload against its event's schema (the spec's v1 alert schema for any other event). */
export function parseEventPayload(json: unknown) {
  const event = (json as { event?: unknown } | null)?.event;
  return event === WEEKLY_DIGEST_EVENT
    ? weeklyDigestPayloadSchema.safeParse(json)
    : event === CHANNEL_DISABLED_EVENT
      ? channelDisabledPayloadSchema.safeParse(json)
      : alertPayloadSchema.safeParse(json);
}
