import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

export const fastRedirect: KindModule = {
  howToUse:
    'Use the link in place of a real one (a bookmark, a wiki page, an internal portal’s menu). Following it fires and sends the visitor straight on to your redirect_url, so nothing looks amiss. A link preview or scanner that follows links fires it too.',
  risk: {
    base: 40,
    what: 'A redirect tripwire link',
    action: 'Find where this link was kept; someone who should not have it is following it',
  },
  make: (settings, { redirectUrl }) => {
    const { url, token } = newTripwireUrl(settings, 'f');
    return { value: url, tokens: [token], redirectUrl };
  },
};
