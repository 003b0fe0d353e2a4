import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { loadSigningKey, logOrigin } from '../../src/evidence/log/signing-key';
import { generateSigner, verifierKey } from '../../src/evidence/log/signed-note';

const log = pino({ level: 'silent' });
const config = (env: Record<string, string>) =>
  loadConfig({ MONGODB_URI: 'mongodb://localhost:27017', ...env });

describe('loadSigningKey', () => {
  it('when production has no key, then it refuses to start, naming the variable', async () => {
    await expect(loadSigningKey(config({ NODE_ENV: 'production' }), log)).rejects.toThrow(
      /EVIDENCE_SIGNING_KEY is required in production/,
    );
  });

  it('when the key is given as a value or as a file, then that key signs', async () => {
    const { signer, skey } = generateSigner('example.com/evidence');
    const fromValue = await loadSigningKey(config({ EVIDENCE_SIGNING_KEY: skey }), log);
    expect(verifierKey(fromValue)).toBe(verifierKey(signer));
    const file = join(await mkdtemp(join(tmpdir(), 'signing-key-')), 'key');
    await writeFile(file, `${skey}\n`);
    const fromFile = await loadSigningKey(config({ EVIDENCE_SIGNING_KEY: file }), log);
    expect(verifierKey(fromFile)).toBe(verifierKey(signer));
  });

  it('when the value is not a key, then it says so', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'signing-key-')), 'key');
    await writeFile(file, 'not a key');
    await expect(loadSigningKey(config({ EVIDENCE_SIGNING_KEY: file }), log)).rejects.toThrow(
      /not a signer key/,
    );
  });

  it('when the origin is derived, then it is the public host and /evidence', () => {
    expect(logOrigin(config({ PUBLIC_BASE_URL: 'https://tripwire.example.com' }))).toBe(
      'tripwire.example.com/evidence',
    );
  });
});
