import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { generateSigner, parseSigner, verifierKey, type NoteSigner } from './signed-note';

/** Where development keeps the key it made, beside the dev database (gitignored). */
export const DEV_KEY_FILE = resolve('.data/evidence-signing.key');

/** The log's name in checkpoints: the service's public host and `/evidence`, as C2SP suggests. */
export const logOrigin = (config: Pick<Config, 'PUBLIC_BASE_URL'>) =>
  `${new URL(config.PUBLIC_BASE_URL).host}/evidence`;

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
      'EVIDENCE_SIGNING_KEY is required in production: the key itself, or the file the compose service evidence-key writes (`node dist/src/admin.cli.js evidence-key` in the image, `npm run evidence-key` in a clone); keep it secret',
    );
  } else {
    signer = await developmentKey(logOrigin(config), log);
  }
  log.info({ origin: signer.name, vkey: verifierKey(signer) }, 'evidence checkpoints signed by');
  return signer;
}

async function developmentKey(origin: string, log: Logger): Promise<NoteSigner> {
  const { signer, made } = await keyInFile(DEV_KEY_FILE, origin);
  if (made) log.warn({ file: DEV_KEY_FILE }, 'made a development evidence signing key');
  return signer;
}

/**
 * The key in `file`, or a new one written there (owner-only) when the file does not exist yet.
 * The new key is written whole and synced under a name of this call's own, then linked into place:
 * a link never replaces a file, and a file that exists is complete, so a second process starting
 * at the same instant reads the first one's key, never a file created but not yet written.
 */
export async function keyInFile(
  file: string,
  origin: string,
): Promise<{ signer: NoteSigner; made: boolean }> {
  const { signer, skey } = generateSigner(origin);
  await mkdir(dirname(file), { recursive: true });
  const draft = `${file}.${randomUUID()}.tmp`;
  try {
    const handle = await open(draft, 'wx', 0o600);
    try {
      await handle.writeFile(`${skey}\n`);
      await handle.chmod(0o600); // whatever the umask
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(draft, file);
    return { signer, made: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { signer: parseSigner(await readFile(file, 'utf8')), made: false };
  } finally {
    await rm(draft, { force: true });
  }
}
