import { generateApiKey } from '../../keys/api-key-format';
import type { KindModule } from './kind';

export const apiKey: KindModule = {
  howToUse:
    'Store it where a real key would live (an .env file, CI secrets, a config repository). It fires when sent to this service as X-API-Key, a bearer token or a password.',
  risk: {
    base: 60,
    what: 'A decoy API key',
    action: 'Find where this key was stored and treat that place as exposed',
  },
  make: () => {
    const { value } = generateApiKey();
    return { value, tokens: [value] };
  },
};
