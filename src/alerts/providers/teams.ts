import { canaryLine, facts, headline } from '../alert-rendering';
import type { AlertPayload } from '../payload';
import { commonHeaders, httpProvider } from './provider';

/**
 * A Microsoft Teams "workflows" webhook (Power Automate's "When a Teams webhook request is
 * received"): a message whose one attachment is an Adaptive Card. The URL carries its signature.
 */
export function teamsMessage(payload: AlertPayload) {
  const { data } = payload;
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
              text: headline(payload),
              weight: 'Bolder',
              size: 'Medium',
              color: data.alertLevel === 'MEDIUM' ? 'Warning' : 'Attention',
              wrap: true,
            },
            {
              type: 'FactSet',
              facts: facts(payload).map(([title, value]) => ({ title, value })),
            },
            { type: 'TextBlock', text: data.interpretation, wrap: true },
            {
              type: 'TextBlock',
              text: canaryLine(payload),
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
