import {
  isChannelNotice,
  type AlertLevel,
  type AlertPayload,
  type ChannelDisabledPayload,
  type OutgoingPayload,
} from './payload';

/**
 * Renderings of one alert or notice: Slack Block Kit, Discord embeds, email, Telegram; the
 * headline, facts, text and closing line (`view`) are shared with the other providers
 * (`providers/`), so every kind says the same.
 */

const LEVEL_COLOURS: Record<AlertLevel, number> = {
  CRITICAL: 0xd32f2f,
  HIGH: 0xf57c00,
  MEDIUM: 0xfbc02d,
};

const LEVEL_MARKS: Record<AlertLevel, string> = { CRITICAL: '🔴', HIGH: '🟠', MEDIUM: '🟡' };

/** What every rendering shows, in its own format. */
export interface MessageView {
  headline: string;
  facts: [label: string, value: string][];
  /** The paragraph below the facts: what it means, what to do. */
  text: string;
  /** The closing line. */
  footer: string;
  /** Colours the message; a notice about a channel shows as HIGH. */
  level: AlertLevel;
  /** When it happened (ISO 8601). */
  at: string;
}

export function view(payload: OutgoingPayload): MessageView {
  return isChannelNotice(payload) ? noticeView(payload) : alertView(payload);
}

function location(place: { city: string; country: string }): string {
  return [place.city, place.country].filter(Boolean).join(', ') || 'unknown';
}

function alertView(payload: AlertPayload): MessageView {
  const { data } = payload;
  return {
    headline: headline(payload),
    facts: facts(payload),
    text: data.interpretation,
    footer: canaryLine(payload),
    level: data.alertLevel,
    at: data.triggeredAt,
  };
}

/** A channel disabled after its deliveries kept failing: which, why, and how to turn it back on. */
function noticeView({ data }: ChannelDisabledPayload): MessageView {
  return {
    headline: `${LEVEL_MARKS.HIGH} Alert channel disabled: ${data.channelKind} "${data.channelName}"`,
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
    at: data.disabledAt,
  };
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

export function slackMessage(payload: OutgoingPayload) {
  const message = view(payload);
  return {
    text: message.headline,
    blocks: [
      {
        type: 'header' as const,
        text: { type: 'plain_text' as const, text: message.headline, emoji: true },
      },
      {
        type: 'section' as const,
        fields: message.facts.map(([label, value]) => ({
          type: 'mrkdwn' as const,
          text: `*${label}*\n${value}`,
        })),
      },
      { type: 'section' as const, text: { type: 'mrkdwn' as const, text: message.text } },
      {
        type: 'context' as const,
        elements: [
          {
            type: 'mrkdwn' as const,
            text: message.footer,
          },
        ],
      },
    ],
  };
}

export function discordMessage(payload: OutgoingPayload) {
  const message = view(payload);
  return {
    embeds: [
      {
        title: message.headline,
        description: message.text,
        color: LEVEL_COLOURS[message.level],
        fields: message.facts.map(([name, value]) => ({ name, value, inline: true })),
        footer: { text: message.footer },
        timestamp: message.at,
      },
    ],
  };
}

/** Escapes text for HTML bodies and Telegram's HTML parse mode (which accepts the same entities). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The built-in email channel: the same facts as a plain-text body and an HTML body. */
export function emailMessage(payload: OutgoingPayload): {
  subject: string;
  text: string;
  html: string;
} {
  const message = view(payload);
  const title = message.headline;
  const rows = message.facts;
  const text = [
    title,
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    message.text,
    '',
    message.footer,
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="border-left:6px solid #${LEVEL_COLOURS[message.level].toString(16)};padding-left:8px">${escapeHtml(title)}</h2>`,
    '<table cellpadding="4">',
    ...rows.map(
      ([label, value]) =>
        `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    ),
    '</table>',
    `<p>${escapeHtml(message.text)}</p>`,
    `<p style="color:#555">${escapeHtml(message.footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: title, text, html };
}

/** The built-in messaging-chat channel: Telegram `sendMessage` text in its HTML parse mode. */
export function telegramText(payload: OutgoingPayload): string {
  const message = view(payload);
  return [
    `<b>${escapeHtml(message.headline)}</b>`,
    ...message.facts.map(([label, value]) => `<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`),
    '',
    escapeHtml(message.text),
    `<i>${escapeHtml(message.footer)}</i>`,
  ].join('\n');
}
