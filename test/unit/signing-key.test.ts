import { execFile } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
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

  it('when two processes make the development key at the same instant, 100 times, then both use the one key and no half-written file is read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signing-key-race-'));
    const rounds = 100;
    // Both children load first (a second or two), then meet at each file at the same instant.
    const startAt = Date.now() + 5_000;
    const child = () =>
      promisify(execFile)(
        process.execPath,
        [
          '--import',
          'tsx',
          resolve(__dirname, '../support/key-in-file-child.ts'),
          dir,
          String(rounds),
          String(startAt),
          '20',
        ],
        { encoding: 'utf8' },
      ).then(({ stdout }) => stdout.trim().split('\n'));
    const [first, second] = await Promise.all([child(), child()]);
    for (let i = 0; i < rounds; i++) {
      const [, madeA, keyA] = first[i]!.split(' ');
      const [, madeB, keyB] = second[i]!.split(' ');
      expect({ i, key: keyB }).toEqual({ i, key: keyA });
      expect({ i, made: [madeA, madeB].sort() }).toEqual({ i, made: ['false', 'true'] });
    }
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);

  it('when the origin is derived, then it is the public host and /evidence', () => {
    expect(logOrigin(config({ PUBLIC_BASE_URL: 'https://tripwire.example.com' }))).toBe(
      'tripwire.example.com/evidence',
    );
  });
});
