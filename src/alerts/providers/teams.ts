import { messageParts } from '../alert-rendering';
import type { EventPayload } from '../payload';
import { commonHeaders, httpProvider } from './provider';

/**
 * A Microsoft Teams "workflows" webhook (Power Automate's "When a Teams webhook request is
 * received"): a message whose one attachment is an Adaptive Card. The URL carries its signature.
 */
export function teamsMessage(payload: EventPayload) {
  const parts = messageParts(payload);
  return {
    type: 'message' as const,
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive' as const,
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard' as const,
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: parts.title,
              weight: 'Bolder',
              size: 'Medium',
              color: !parts.level ? 'Accent' : parts.level === 'MEDIUM' ? 'Warning' : 'Attention',
              wrap: true,
            },
            {
              type: 'FactSet',
              facts: parts.facts.map(([title, value]) => ({ title, value })),
            },
            { type: 'TextBlock', text: parts.text, wrap: true },
            {
              type: 'TextBlock',
              text: parts.footer,
              isSubtle: true,
              size: 'Small',
              wrap: true,
            },
          ],
        },
      },
    ],
  };
}

export const teamsProvider = httpProvider({
  secret: 'none',
  render: (alert) => ({
    body: JSON.stringify(teamsMessage(alert.payload)),
    headers: commonHeaders(alert),
  }),
});
