import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

export const slowRedirect: KindModule = {
  howToUse:
    'Use the link in place of a real one, like a redirect link. Following it shows a blank page for a moment while its JavaScript reads the browser’s time zone, language, screen, platform and cores; then the hit is recorded with them (after the browser’s user agent) and the visitor is sent on to your redirect_url. A browser without JavaScript is sent on at once, with no details; a link preview that runs no JavaScript does not fire it.',
  risk: {
    base: 40,
    what: 'A redirect tripwire link',
    action: 'Find where this link was kept; someone who should not have it is following it',
  },
  make: (settings, { redirectUrl }) => {
    const { url, token } = newTripwireUrl(settings, 's');
    return { value: url, tokens: [token], redirectUrl };
  },
};
