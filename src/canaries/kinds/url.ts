import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

export const url: KindModule = {
  howToUse:
    'Put the link where only an intruder would follow it (an internal wiki, a bookmarks file, a document). It fires when fetched; the fetcher sees an ordinary page.',
  risk: {
    base: 40,
    what: 'A tripwire URL',
    action: 'Find where this link was kept; someone who should not have it is following it',
  },
  make: (settings) => {
    const { url, token } = newTripwireUrl(settings);
    return { value: url, tokens: [token] };
  },
};
