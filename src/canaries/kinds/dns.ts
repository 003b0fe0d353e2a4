import { newDnsName } from '../decoys';
import type { KindModule } from './kind';

export const dns: KindModule = {
  howToUse:
    'Put the hostname where a lookup means someone is using it (a config file, an internal URL, a hosts list; another canary may embed it). Any DNS lookup of it fires, even where outbound HTTP is blocked; the resolver that asked is recorded, not the attacker, whose address DNS does not reveal.',
  risk: {
    base: 40,
    what: 'A DNS canary hostname',
    action:
      'Someone is using the file or system where this hostname was planted; treat it as exposed',
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    return { value: name, tokens: [token] };
  },
  platform: () => 'dns',
};
