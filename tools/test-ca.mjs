// A throw-away certificate authority and a server certificate for 127.0.0.1, ::1 and localhost, made
// with openssl: for the HTTPS receivers of the tests, the benchmarks and `npm run dev` (the README
// walkthrough), trusted through NODE_EXTRA_CA_CERTS.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeTestCa(dir, days = 2) {
  const file = (name) => join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    String(days),
    '-subj',
    '/CN=tripwire test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  );
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    String(days),
    '-extfile',
    file('server.ext'),
    '-out',
    file('server.pem'),
  );
  return {
    NODE_EXTRA_CA_CERTS: file('ca.pem'),
    TEST_TLS_CERT: file('server.pem'),
    TEST_TLS_KEY: file('server.key'),
  };
}
