import { view } from '../alert-rendering';
import type { OutgoingPayload } from '../payload';
import { commonHeaders, httpProvider } from './provider';

/**
 * A Microsoft Teams "workflows" webhook (Power Automate's "When a Teams webhook request is
 * received"): a message whose one attachment is an Adaptive Card. The URL carries its signature.
 */
export function teamsMessage(payload: OutgoingPayload) {
  const message = view(payload);
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
              text: message.headline,
              weight: 'Bolder',
              size: 'Medium',
              color: message.level === 'MEDIUM' ? 'Warning' : 'Attention',
              wrap: true,
            },
            {
              type: 'FactSet',
              facts: message.facts.map(([title, value]) => ({ title, value })),
            },
            { type: 'TextBlock', text: message.text, wrap: true },
            {
              type: 'TextBlock',
              text: message.footer,
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
