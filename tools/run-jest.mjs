// Starts Jest with a throw-away certificate authority for the tests' HTTPS receivers. Node reads
// NODE_EXTRA_CA_CERTS only when a process starts, so the CA must exist before Jest (and its
// workers) do; certificate checks stay on everywhere. Arguments are passed on to Jest.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'tripwire-test-ca-'));
const file = (name) => join(dir, name);
const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });

openssl(
  'req',
  '-x509',
  '-newkey',
  'rsa:2048',
  '-nodes',
  '-days',
  '2',
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
  '2',
  '-extfile',
  file('server.ext'),
  '-out',
  file('server.pem'),
);

const env = {
  ...process.env,
  NODE_EXTRA_CA_CERTS: file('ca.pem'),
  TEST_TLS_CERT: file('server.pem'),
  TEST_TLS_KEY: file('server.key'),
};
const jest = spawn(join('node_modules', '.bin', 'jest'), process.argv.slice(2), {
  stdio: 'inherit',
  env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => jest.kill(signal));
jest.on('exit', (code, signal) => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
