/**
 * Makes an Ed25519 key for signing the evidence log's checkpoints.
 *
 *   npm run evidence-key -- [origin]     (origin defaults to <PUBLIC_BASE_URL host>/evidence)
 *
 * Prints the private key (set it as EVIDENCE_SIGNING_KEY, or store it in a file and set the path)
 * on stdout and the public verifier key on stderr, to publish for anyone who verifies exports.
 */
import { generateSigner, verifierKey } from '../src/evidence/log/signed-note';

const origin =
  process.argv[2] ??
  `${new URL(process.env.PUBLIC_BASE_URL ?? 'http://localhost:8080').host}/evidence`;
const { signer, skey } = generateSigner(origin);
console.log(skey);
console.error(`public key (verifier key): ${verifierKey(signer)}`);
