/**
 * The offline verifier: checks an evidence export trusting nothing from the server but its public
 * key (get it from the operator, not from the export).
 *
 *   npm run verify-evidence -- export.json --public-key <vkey or file> [--public-key …]
 *       [--earlier-checkpoint checkpoint.txt --consistency proof.json]
 *
 * `--earlier-checkpoint` is a signed checkpoint you kept from before (GET /api/log/checkpoint);
 * `--consistency` the answer of GET /api/log/consistency?from=<its size>&to=<the export's size>.
 * Prints one line, VERIFIED or FAILED with the first record that failed; exit code 0 when
 * verified, 1 when not, 2 when the input cannot be read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { evidenceExportView } from '../src/evidence/export/evidence-export';
import { consistencyView } from '../src/evidence/log/evidence-log';
import { verifyExport } from '../src/evidence/export/export-verifier';
import { parseVerifier } from '../src/evidence/log/signed-note';

function main(): number {
  const { values, positionals } = parseArgs({
    options: {
      'public-key': { type: 'string', multiple: true },
      'earlier-checkpoint': { type: 'string' },
      consistency: { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  const keyArgs = values['public-key'] ?? [];
  if (!file || !keyArgs.length) {
    console.error('usage: verify-evidence <export.json> --public-key <vkey or file>');
    return 2;
  }
  if (Boolean(values['earlier-checkpoint']) !== Boolean(values.consistency)) {
    console.error('--earlier-checkpoint and --consistency go together');
    return 2;
  }
  const keys = keyArgs.map((k) => parseVerifier(existsSync(k) ? readFileSync(k, 'utf8') : k));
  const parsed = evidenceExportView.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    console.error(`not an evidence export: ${z.prettifyError(parsed.error)}`);
    return 2;
  }
  const earlier = values['earlier-checkpoint']
    ? {
        note: readFileSync(values['earlier-checkpoint'], 'utf8'),
        proof: consistencyView.parse(JSON.parse(readFileSync(values.consistency!, 'utf8'))).proof,
      }
    : undefined;
  const verdict = verifyExport(parsed.data, keys, earlier);
  console.log(verdict.line);
  return verdict.ok ? 0 : 1;
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`cannot verify: ${(err as Error).message}`);
  process.exitCode = 2;
}
