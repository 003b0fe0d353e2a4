import {
  isChannelNotice,
  isWeeklyDigest,
  type AlertLevel,
  type AlertPayload,
  type ChannelDisabledPayload,
  type EventPayload,
  type WeeklyDigestPayload,
} from './payload';

/**
 * Renderings of one alert, digest or notice: Slack Block Kit, Discord embeds, email, Telegram; its parts
 * (`messageParts`: headline, facts, text, closing line) are shared with the other providers
 * (`providers/`), so every kind says the same.
 */

const LEVEL_COLOURS: Record<AlertLevel, number> = {
  CRITICAL: 0xd32f2f,
  HIGH: 0xf57c00,
  MEDIUM: 0xfbc02d,
};

const LEVEL_MARKS: Record<AlertLevel, string> = { CRITICAL: '🔴', HIGH: '🟠', MEDIUM: '🟡' };

function location(place: { city: string; country: string }): string {
  return [place.city, place.country].filter(Boolean).join(', ') || 'unknown';
}

function headline({ data }: AlertPayload): string {
  const prefix = data.test ? '[TEST] ' : '';
  const what = data.summary ?? 'canary fired';
  return `${prefix}${LEVEL_MARKS[data.alertLevel]} ${data.alertLevel}: ${what} on ${data.platform}`;
}

/**
 * The facts shown, in order: which decoy (the owner's memo) and where it was planted, then who
 * touched it (or, for a decoy email or DNS name, the mail server or resolver that relayed it).
 */
function facts({ data }: AlertPayload): [label: string, value: string][] {
  const decoy: [string, string][] =
    data.canaryKind === 'agent' || data.test
      ? []
      : [
          ['Memo', data.memo || '(none)'],
          ['Planted on', data.platform],
        ];
  const relay = data.mailServer
    ? { name: 'Mail server', note: 'sender’s provider: do not block', place: data.mailServer }
    : data.resolver && { name: 'DNS resolver', note: 'not the attacker', place: data.resolver };
  const source: [string, string][] = relay
    ? [
        [`${relay.name} (${relay.note})`, relay.place.ip || 'unknown'],
        [`${relay.name} location`, location(relay.place)],
        [`${relay.name} organisation`, relay.place.org || 'unknown'],
      ]
    : [
        ['Attacker IP', data.attacker.ip || 'none recorded'],
        ['Location', location(data.attacker)],
        ['Organisation', data.attacker.org || 'unknown'],
        ['Attacker type', data.attacker.type],
      ];
  return [...decoy, ...source, ['Risk score', `${data.riskScore}/100 (${data.riskLevel})`]];
}

/** The closing line: an agent alert names the agent, a canary alert its id and age. */
function canaryLine({ data }: AlertPayload): string {
  if (data.canaryKind === 'agent') return `Agent ${data.canaryId} · ${data.triggeredAt}`;
  return `Canary ${data.canaryId} · planted ${data.canaryAgeDays} days ago · ${data.triggeredAt}`;
}

/** Most canaries a digest lists line by line: chat messages have length limits. */
const DIGEST_CANARY_LINES = 15;
/** Most countries, outcomes or failing channels a digest fact names. */
const DIGEST_FACT_ITEMS = 5;
const DIGEST_COLOUR = 0x1976d2;

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The calendar day of an instant in a time zone, as `YYYY-MM-DD`. */
function dayIn(at: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, dateStyle: 'short' }).format(new Date(at));
}

/** `key count, key count, …` of the first few, `none` when empty. */
function listed(rows: { key: string; count: number }[]): string {
  if (!rows.length) return 'none';
  const shown = rows.slice(0, DIGEST_FACT_ITEMS).map((r) => `${r.key} ${r.count}`);
  return [...shown, ...(rows.length > shown.length ? ['…'] : [])].join(', ');
}

export function digestHeadline({ data }: WeeklyDigestPayload): string {
  const failing = data.stillFailing.length
    ? ` · ${plural(data.stillFailing.length, 'channel', 'channels')} failing`
    : '';
  return `📊 Weekly digest: ${plural(data.totalHits, 'hit', 'hits')} on ${plural(data.canaries.length, 'canary', 'canaries')}${failing}`;
}

export function digestFacts({ data }: WeeklyDigestPayload): [label: string, value: string][] {
  const failing = data.stillFailing
    .slice(0, DIGEST_FACT_ITEMS)
    .map((c) => `${c.kind} "${c.name}": ${c.lastError.slice(0, 120)}`);
  return [
    [
      'Week',
      `${dayIn(data.from, data.timeZone)} to ${dayIn(data.to, data.timeZone)} (${data.timeZone})`,
    ],
    ['Hits', String(data.totalHits)],
    ['Canaries fired', String(data.canaries.length)],
    ['Sources by country', listed(data.sourcesByCountry)],
    ['Deliveries', listed(data.deliveriesByOutcome)],
    ['Still failing', failing.length ? failing.join('; ') : 'nothing'],
  ];
}

/** One line per canary that fired, most hit first: its hits, then each day's. */
export function digestText({ data }: WeeklyDigestPayload): string {
  if (!data.canaries.length) return 'No canary fired this week.';
  const lines = data.canaries.slice(0, DIGEST_CANARY_LINES).map((c) => {
    const days = c.byDay.map((d) => `${d.key}: ${d.count}`).join(', ');
    return `• ${c.memo || c.canaryId} (${c.kind}, ${c.canaryId}): ${plural(c.hits, 'hit', 'hits')} (${days})`;
  });
  const more = data.canaries.length - lines.length;
  return [
    ...lines,
    ...(more > 0 ? [`… and ${plural(more, 'more canary', 'more canaries')}`] : []),
  ].join('\n');
}

/** What every rendering shows, whatever the event: alerts and digests alike. */
export interface MessageParts {
  title: string;
  facts: [label: string, value: string][];
  /** An alert's interpretation; a digest's canaries by day. */
  text: string;
  /** The closing line. */
  footer: string;
  /** The alert's level (a notice about a channel shows as HIGH); null for a digest, which reports. */
  level: AlertLevel | null;
  colour: number;
  /** When it happened (ISO 8601): the first hit, or the end of the digest's week. */
  at: string;
}

/** A channel disabled after its deliveries kept failing: which, why, and how to turn it back on. */
function noticeParts({ data }: ChannelDisabledPayload): MessageParts {
  return {
    title: `${LEVEL_MARKS.HIGH} Alert channel disabled: ${data.channelKind} "${data.channelName}"`,
    facts: [
      ['Channel', `${data.channelKind} "${data.channelName}" (${data.channelId})`],
      ['Failing since', data.failingSince],
      ['Last delivered', data.lastDeliveryAt ?? 'never'],
      [
        'Last error',
        data.lastError
          ? `${data.lastError.status !== null ? `${data.lastError.status}: ` : ''}${data.lastError.message}`
          : 'none recorded',
      ],
    ],
    text: `${data.reason}. Alerts no longer go to this channel. Once its receiver works again, enable the channel on the console's channels page (or PATCH /api/alert-channels/${data.channelId} with {"disabled": false}).`,
    footer: `Channel ${data.channelId} · disabled ${data.disabledAt}`,
    level: 'HIGH',
    colour: LEVEL_COLOURS.HIGH,
    at: data.disabledAt,
  };
}

export function messageParts(payload: EventPayload): MessageParts {
  if (isChannelNotice(payload)) return noticeParts(payload);
  if (isWeeklyDigest(payload)) {
    return {
      title: digestHeadline(payload),
      facts: digestFacts(payload),
      text: digestText(payload),
      footer: `Weekly digest of account ${payload.data.accountId} · sent ${payload.sentAt}`,
      level: null,
      colour: DIGEST_COLOUR,
      at: payload.data.to,
    };
  }
  return {
    title: headline(payload),
    facts: facts(payload),
    text: payload.data.interpretation,
    footer: canaryLine(payload),
    level: payload.data.alertLevel,
    colour: LEVEL_COLOURS[payload.data.alertLevel],
    at: payload.data.triggeredAt,
  };
}

export function slackMessage(payload: EventPayload) {
  const parts = messageParts(payload);
  return {
    text: parts.title,
    blocks: [
      {
        type: 'header' as const,
        text: { type: 'plain_text' as const, text: parts.title, emoji: true },
      },
      {
        type: 'section' as const,
        fields: parts.facts.map(([label, value]) => ({
          type: 'mrkdwn' as const,
          text: `*${label}*\n${value}`,
        })),
      },
      { type: 'section' as const, text: { type: 'mrkdwn' as const, text: parts.text } },
      {
        type: 'context' as const,
        elements: [
          {
            type: 'mrkdwn' as const,
            text: parts.footer,
          },
        ],
      },
    ],
  };
}

export function discordMessage(payload: EventPayload) {
  const parts = messageParts(payload);
  return {
    embeds: [
      {
        title: parts.title,
        description: parts.text,
        color: parts.colour,
        fields: parts.facts.map(([name, value]) => ({ name, value, inline: true })),
        footer: { text: parts.footer },
        timestamp: parts.at,
      },
    ],
  };
}

/** Escapes text for HTML bodies and Telegram's HTML parse mode (which accepts the same entities). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The built-in email channel: the same facts as a plain-text body and an HTML body. */
export function emailMessage(payload: EventPayload): {
  subject: string;
  text: string;
  html: string;
} {
  const { title, facts: rows, text: body, footer, colour } = messageParts(payload);
  const text = [
    title,
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    body,
    '',
    footer,
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="border-left:6px solid #${colour.toString(16)};padding-left:8px">${escapeHtml(title)}</h2>`,
    '<table cellpadding="4">',
    ...rows.map(
      ([label, value]) =>
        `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    ),
    '</table>',
    `<p style="white-space:pre-line">${escapeHtml(body)}</p>`,
    `<p style="color:#555">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: title, text, html };
}

/** The built-in messaging-chat channel: Telegram `sendMessage` text in its HTML parse mode. */
export function telegramText(payload: EventPayload): string {
  const parts = messageParts(payload);
  return [
    `<b>${escapeHtml(parts.title)}</b>`,
    ...parts.facts.map(([label, value]) => `<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`),
    '',
    escapeHtml(parts.text),
    `<i>${escapeHtml(parts.footer)}</i>`,
  ].join('\n');
}
