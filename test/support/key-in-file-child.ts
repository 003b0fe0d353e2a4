/**
 * One of the processes that `signing-key.test.ts` starts at once: at `startAt + i * stepMs` it
 * takes the key in `<dir>/key-<i>` (making it when absent), and prints `<i> <made> <verifier key>`.
 */
import { join } from 'node:path';
import { keyInFile } from '../../src/evidence/log/signing-key';
import { verifierKey } from '../../src/evidence/log/signed-note';

async function main(): Promise<void> {
  const [dir, rounds, startAt, stepMs] = process.argv.slice(2);
  for (let i = 0; i < Number(rounds); i++) {
    const at = Number(startAt) + i * Number(stepMs);
    while (Date.now() < at); // a busy wait: both processes reach the file within microseconds
    const { signer, made } = await keyInFile(join(dir!, `key-${i}`), 'example.com/evidence');
    console.log(`${i} ${made} ${verifierKey(signer)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
