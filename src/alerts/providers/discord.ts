import { discordMessage } from '../alert-rendering';
import { commonHeaders, httpProvider } from './provider';

/** A Discord channel webhook: one embed, unsigned (the URL carries Discord's token). */
export const discordProvider = httpProvider({
  secret: 'none',
  render: (alert) => ({
    body: JSON.stringify(discordMessage(alert.payload)),
    headers: commonHeaders(alert),
  }),
});
