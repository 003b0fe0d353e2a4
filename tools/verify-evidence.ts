/**
 * The offline verifier: checks an evidence export trusting nothing from the server but its public
 * key (get it from the operator, not from the export).
 *
 *   npm run verify-evidence -- export.json --public-key <vkey or file> [--public-key …]
 *       [--earlier-checkpoint checkpoint.txt --consistency proof.json]
 *
 * `--earlier-checkpoint` is a signed checkpoint you kept from before (GET /api/log/checkpoint);
 * `--consistency` the answer of GET /api/log/consistency?from=<its size>&to=<the export's size>.
 *
 *   npm run verify-evidence -- --promise answer.json --public-key <vkey or file> [--inclusion later.json]
 *
 * checks a record's signed inclusion promise instead: `answer.json` is the answer that carried it
 * (a sealing write's, POST /audit/verify/<log_id> or GET /api/verify/<hash>); the inclusion proof
 * is taken from `--inclusion` (a later verify or check answer) or else from the answer itself.
 *
 * Prints one line, VERIFIED or FAILED with the first thing that failed; exit code 0 when
 * verified, 1 when not, 2 when the input cannot be read.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { evidenceExportView } from '../src/evidence/export/evidence-export';
import { consistencyView } from '../src/evidence/log/evidence-log';
import { verifyExport } from '../src/evidence/export/export-verifier';
import { parseVerifier, type NoteVerifier } from '../src/evidence/log/signed-note';
import { inclusionView } from '../src/evidence/log/evidence-log';
import { inclusionPromiseView, verifyPromise } from '../src/evidence/log/inclusion-promise';

/** What a promise check reads from an answer, wherever the answer keeps it. */
const promisedAnswer = z.union([
  z.object({ promise: inclusionPromiseView, stored_hash: z.string() }),
  z.object({ promise: inclusionPromiseView, content_hash: z.string() }),
  z.object({
    evidence: z.object({ promise: inclusionPromiseView, content_hash: z.string() }),
  }),
]);
const provenAnswer = z.object({ inclusion: inclusionView.nullable().optional() });

function checkPromise(
  file: string,
  inclusionFile: string | undefined,
  keys: NoteVerifier[],
): number {
  const answer: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const parsed = promisedAnswer.safeParse(answer);
  if (!parsed.success) {
    console.error(`${file}: no promise and content hash in it`);
    return 2;
  }
  const { promise, hash } =
    'evidence' in parsed.data
      ? { promise: parsed.data.evidence.promise, hash: parsed.data.evidence.content_hash }
      : {
          promise: parsed.data.promise,
          hash: 'stored_hash' in parsed.data ? parsed.data.stored_hash : parsed.data.content_hash,
        };
  const later: unknown = inclusionFile ? JSON.parse(readFileSync(inclusionFile, 'utf8')) : answer;
  const inclusion = provenAnswer.parse(later).inclusion ?? null;
  const verdict = verifyPromise(promise.note, hash, inclusion, keys);
  console.log(verdict.line);
  return verdict.ok ? 0 : 1;
}

function main(): number {
  const { values, positionals } = parseArgs({
    options: {
      'public-key': { type: 'string', multiple: true },
      'earlier-checkpoint': { type: 'string' },
      consistency: { type: 'string' },
      promise: { type: 'string' },
      inclusion: { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  const keyArgs = values['public-key'] ?? [];
  if (!(file || values.promise) || !keyArgs.length) {
    console.error(
      'usage: verify-evidence <export.json> --public-key <vkey or file>\n' +
        '       verify-evidence --promise <answer.json> --public-key <vkey or file> [--inclusion <answer.json>]',
    );
    return 2;
  }
  if (Boolean(values['earlier-checkpoint']) !== Boolean(values.consistency)) {
    console.error('--earlier-checkpoint and --consistency go together');
    return 2;
  }
  const keys = keyArgs.map((k) => parseVerifier(existsSync(k) ? readFileSync(k, 'utf8') : k));
  if (values.promise) return checkPromise(values.promise, values.inclusion, keys);
  const parsed = evidenceExportView.safeParse(JSON.parse(readFileSync(file!, 'utf8')));
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
