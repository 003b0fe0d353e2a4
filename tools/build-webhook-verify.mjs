// Packs the receivers' package (packages/webhook-verify: compiled by its prepack script) into
// dist/downloads/webhook-verify.tgz, the file the API serves at GET /downloads/webhook-verify.tgz,
// so a receiver installs it with `npm install <url or file>` without this repository.
import { execFile } from 'node:child_process';
import { mkdir, rename } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const outdir = resolve('dist/downloads');
await mkdir(outdir, { recursive: true });
const { stdout } = await promisify(execFile)(
  'npm',
  ['pack', '--json', '--pack-destination', outdir],
  { cwd: resolve('packages/webhook-verify') },
);
const [{ filename }] = JSON.parse(stdout);
await rename(resolve(outdir, filename), resolve(outdir, 'webhook-verify.tgz'));
console.log(`[webhook-verify] packed ${outdir}/webhook-verify.tgz`);
