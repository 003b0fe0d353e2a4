import { BASE32, emailToken, randomFrom } from '../decoys';
import type { KindModule } from './kind';

export const email: KindModule = {
  howToUse:
    'Plant the address where harvesters look. Mail to it fires; the delivering server is recorded as the mail server (the sender’s provider, not the attacker).',
  risk: {
    base: 35,
    what: 'A decoy email address',
    action:
      'The address was harvested from where you planted it; expect phishing or spam to your real addresses',
  },
  relay: 'mail',
  make: (settings) => {
    const local = `${randomFrom(BASE32, 6)}.${randomFrom(BASE32, 6)}`;
    const address = `${local}@${settings.decoyEmailDomain}`;
    return { value: address, tokens: [emailToken(address)] };
  },
  platform: () => 'email',
};
