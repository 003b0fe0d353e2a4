import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { generateSigner, parseSigner, verifierKey, type NoteSigner } from './signed-note';

/** Where development keeps the key it made, beside the dev database (gitignored). */
export const DEV_KEY_FILE = resolve('.data/evidence-signing.key');

/** The log's name in checkpoints: the service's public host and `/evidence`, as C2SP suggests. */
export const logOrigin = (config: Config) => `${new URL(config.PUBLIC_BASE_URL).host}/evidence`;

/**
 * The checkpoint signing key: `EVIDENCE_SIGNING_KEY` holds the key itself
 * (`PRIVATE+KEY+<name>+<id>+<key>`) or the path of a file that does. Production must set it; in
 * development one is made on first start, kept in .data/ and reused. The public key is logged.
 */
export async function loadSigningKey(config: Config, log: Logger): Promise<NoteSigner> {
  const value = config.EVIDENCE_SIGNING_KEY;
  let signer: NoteSigner;
  if (value) {
    signer = parseSigner(value.startsWith('PRIVATE+KEY+') ? value : await readFile(value, 'utf8'));
  } else if (config.NODE_ENV === 'production') {
    throw new Error(
      'EVIDENCE_SIGNING_KEY is required in production: run `npm run evidence-key` and keep the key secret',
    );
  } else {
    signer = await developmentKey(logOrigin(config), log);
  }
  log.info({ origin: signer.name, vkey: verifierKey(signer) }, 'evidence checkpoints signed by');
  return signer;
}

async function developmentKey(origin: string, log: Logger): Promise<NoteSigner> {
  try {
    return parseSigner(await readFile(DEV_KEY_FILE, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { signer, skey } = generateSigner(origin);
  await mkdir(dirname(DEV_KEY_FILE), { recursive: true });
  await writeFile(DEV_KEY_FILE, `${skey}\n`, { mode: 0o600 });
  await chmod(DEV_KEY_FILE, 0o600);
  log.warn({ file: DEV_KEY_FILE }, 'made a development evidence signing key');
  return signer;
}
