import { newDnsName } from '../decoys';
import type { KindModule } from './kind';

/** The leaked host name in a hit's name: `x<hostName>.L4J.<token>.<zone>`, as DNS lower-cases it. */
const LEAKED_HOST = /^x([a-z0-9-]{0,63})\.l4j\./;

export const log4shell: KindModule = {
  howToUse:
    'Put the string where an attacker’s input is logged by Java services: a user agent, a form field, a username, an HTTP header of a request to your own systems, or leave it in a config value. A Log4j 2 before 2.15.0 (CVE-2021-44228) that logs it looks up the hostname, with the logging machine’s host name in it; the lookup fires and the host name is recorded. Patched Log4j, other loggers and networks without outbound DNS do not fire it; the resolver that asked is recorded, not the machine.',
  risk: {
    base: 70,
    what: 'A Log4Shell canary string',
    action:
      'A Java service logged the string and is vulnerable to Log4Shell (CVE-2021-44228); upgrade Log4j on the named host and check what else reached it',
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    return { value: `\${jndi:ldap://x\${hostName}.L4J.${name}/a}`, tokens: [token] };
  },
  platform: (source) => {
    const host = LEAKED_HOST.exec(source.resolver?.name ?? '')?.[1];
    return host ? `Log4j on ${host}` : 'Log4j';
  },
};
