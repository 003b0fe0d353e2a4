import { randomBytes } from 'node:crypto';
import { BASE32, postgresUserToken, randomFrom } from '../decoys';
import type { KindModule } from './kind';

export const databaseUrl: KindModule = {
  howToUse:
    'Leave it in a config file or secret store next to real connection strings. Connecting with it (psql, any Postgres driver) reaches this service’s decoy Postgres listener, which fires and answers an ordinary authentication failure; its password presented to this service fires too.',
  risk: {
    base: 55,
    what: 'A decoy database password',
    action: 'Treat the file or secret store that held this connection string as exposed',
  },
  make: ({ publicHost, postgresPort }) => {
    const user = `svc_${randomFrom(BASE32, 10)}`;
    const password = randomBytes(18).toString('base64url');
    return {
      value: `postgres://${user}:${password}@${publicHost}:${postgresPort}/production`,
      tokens: [password, postgresUserToken(user)],
    };
  },
};
