import { slackMessage } from '../alert-rendering';
import { commonHeaders, httpProvider } from './provider';

/** A Slack incoming webhook (or anything that takes Block Kit): unsigned, the URL is the secret. */
export const slackProvider = httpProvider({
  secret: 'none',
  render: (alert) => ({
    body: JSON.stringify(slackMessage(alert.payload)),
    headers: commonHeaders(alert),
  }),
});
