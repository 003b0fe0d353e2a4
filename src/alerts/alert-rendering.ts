import type { AlertLevel, AlertPayload } from './payload';

/**
 * Renderings of one alert: Slack Block Kit, Discord embeds, email, Telegram; the headline, facts and
 * canary line are shared with the other providers (`providers/`), so every kind says the same.
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

export function headline({ data }: AlertPayload): string {
  const prefix = data.test ? '[TEST] ' : '';
  const what = data.summary ?? 'canary fired';
  return `${prefix}${LEVEL_MARKS[data.alertLevel]} ${data.alertLevel}: ${what} on ${data.platform}`;
}

/**
 * The facts shown, in order: which decoy (the owner's memo) and where it was planted, then who
 * touched it (or, for a decoy email or DNS name, the mail server or resolver that relayed it).
 */
export function facts({ data }: AlertPayload): [label: string, value: string][] {
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
export function canaryLine({ data }: AlertPayload): string {
  if (data.canaryKind === 'agent') return `Agent ${data.canaryId} · ${data.triggeredAt}`;
  return `Canary ${data.canaryId} · planted ${data.canaryAgeDays} days ago · ${data.triggeredAt}`;
}

export function slackMessage(payload: AlertPayload) {
  const { data } = payload;
  return {
    text: headline(payload),
    blocks: [
      {
        type: 'header' as const,
        text: { type: 'plain_text' as const, text: headline(payload), emoji: true },
      },
      {
        type: 'section' as const,
        fields: facts(payload).map(([label, value]) => ({
          type: 'mrkdwn' as const,
          text: `*${label}*\n${value}`,
        })),
      },
      { type: 'section' as const, text: { type: 'mrkdwn' as const, text: data.interpretation } },
      {
        type: 'context' as const,
        elements: [
          {
            type: 'mrkdwn' as const,
            text: canaryLine(payload),
          },
        ],
      },
    ],
  };
}

export function discordMessage(payload: AlertPayload) {
  const { data } = payload;
  return {
    embeds: [
      {
        title: headline(payload),
        description: data.interpretation,
        color: LEVEL_COLOURS[data.alertLevel],
        fields: facts(payload).map(([name, value]) => ({ name, value, inline: true })),
        footer: { text: canaryLine(payload) },
        timestamp: data.triggeredAt,
      },
    ],
  };
}

/** Escapes text for HTML bodies and Telegram's HTML parse mode (which accepts the same entities). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The built-in email channel: the same facts as a plain-text body and an HTML body. */
export function emailMessage(payload: AlertPayload): {
  subject: string;
  text: string;
  html: string;
} {
  const { data } = payload;
  const title = headline(payload);
  const rows = facts(payload);
  const text = [
    title,
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    data.interpretation,
    '',
    canaryLine(payload),
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="border-left:6px solid #${LEVEL_COLOURS[data.alertLevel].toString(16)};padding-left:8px">${escapeHtml(title)}</h2>`,
    '<table cellpadding="4">',
    ...rows.map(
      ([label, value]) =>
        `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    ),
    '</table>',
    `<p>${escapeHtml(data.interpretation)}</p>`,
    `<p style="color:#555">${escapeHtml(canaryLine(payload))}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: title, text, html };
}

/** The built-in messaging-chat channel: Telegram `sendMessage` text in its HTML parse mode. */
export function telegramText(payload: AlertPayload): string {
  return [
    `<b>${escapeHtml(headline(payload))}</b>`,
    ...facts(payload).map(([label, value]) => `<b>${escapeHtml(label)}:</b> ${escapeHtml(value)}`),
    '',
    escapeHtml(payload.data.interpretation),
    `<i>${escapeHtml(canaryLine(payload))}</i>`,
  ].join('\n');
}
