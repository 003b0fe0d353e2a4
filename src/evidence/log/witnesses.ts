import type { Logger } from '../../logger';
import { witnessCosignatures } from '../../metrics';
import type { MerkleTreeStore } from './log-tree';
import {
  cosignatureTime,
  parseCosignerKey,
  parseSignatureLines,
  splitNote,
  type NoteVerifier,
} from './signed-note';

/** A witness the log submits its checkpoints to: its cosigning key and its submission prefix. */
export interface Witness {
  key: NoteVerifier;
  url: string;
}

/**
 * `EVIDENCE_WITNESSES`: entries separated by commas or newlines, each a witness's vkey
 * (`<name>+<key id>+<base64(0x04 ‖ key)>`) and its submission URL prefix, separated by a space.
 */
export function parseWitnesses(value: string | undefined): Witness[] {
  return (value ?? '')
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      try {
        const [vkey, url, extra] = entry.split(/\s+/);
        if (!vkey || !url || extra !== undefined) {
          throw new TypeError(`a witness is "<vkey> <submission URL>", not "${entry}"`);
        }
        const parsed = new URL(url);
        if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
          throw new TypeError(`witness URL ${url}: http or https`);
        }
        return { key: parseCosignerKey(vkey), url: url.replace(/\/+$/, '') };
      } catch (err) {
        throw new TypeError(`EVIDENCE_WITNESSES: ${(err as Error).message}`);
      }
    });
}

/** A witness answered that it will not cosign: its status and what it said. */
export class WitnessRefusal extends Error {}

const TIMEOUT_MS = 10_000;
/** A 409 names the size the witness holds; a second one in a row means it moved meanwhile. */
const ATTEMPTS = 3;
const TLOG_SIZE = 'text/x.tlog.size';

/**
 * Submits checkpoints to witnesses (C2SP tlog-witness `add-checkpoint`), each with a consistency
 * proof from the size that witness last cosigned, and answers the cosignature lines that verify
 * against the configured witness keys (C2SP tlog-cosignature). A witness that refuses or cannot be
 * reached costs the checkpoint its cosignature, never the checkpoint: monitors see it missing.
 */
export class WitnessClient {
  /** The size each witness last cosigned, as far as this process knows (a 409 corrects it). */
  private readonly sizes = new Map<string, number>();

  constructor(
    readonly witnesses: readonly Witness[],
    private readonly tree: MerkleTreeStore,
    private readonly log: Logger,
  ) {}

  /** Cosignature lines for a signed checkpoint note of this size, one per witness that signed. */
  async cosign(note: string, size: number): Promise<string[]> {
    const lines = await Promise.all(
      this.witnesses.map(async (witness) => {
        const name = witness.key.name;
        try {
          const line = await this.submit(witness, note, size);
          witnessCosignatures.inc({ witness: name, outcome: 'cosigned' });
          return line;
        } catch (err) {
          const refused = err instanceof WitnessRefusal;
          witnessCosignatures.inc({ witness: name, outcome: refused ? 'refused' : 'unreachable' });
          this.log.error(
            { err, witness: name, size },
            refused ? 'witness refused the checkpoint' : 'witness not reached',
          );
          return null;
        }
      }),
    );
    return lines.filter((line) => line !== null);
  }

  private async submit(witness: Witness, note: string, size: number): Promise<string> {
    const { text } = splitNote(note);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const old = this.sizes.get(witness.key.name) ?? 0;
      if (old > size) {
        throw new WitnessRefusal(
          `the witness has cosigned size ${old}, larger than this checkpoint's ${size}`,
        );
      }
      const proof = old > 0 && old < size ? await this.tree.consistencyProof(old, size) : [];
      const body = [`old ${old}`, ...proof.map((p) => p.toString('base64')), '', note].join('\n');
      const res = await fetch(`${witness.url}/add-checkpoint`, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const answer = await res.text();
      if (res.status === 409 && res.headers.get('content-type')?.startsWith(TLOG_SIZE)) {
        const held = Number(answer.trim());
        if (!Number.isSafeInteger(held) || held < 0) throw new WitnessRefusal(`409: ${answer}`);
        this.sizes.set(witness.key.name, held);
        continue;
      }
      if (!res.ok) throw new WitnessRefusal(`${res.status}: ${answer.trim().slice(0, 200)}`);
      const cosigned = parseSignatureLines(answer).find(
        (s) => cosignatureTime(text, [s], witness.key) !== null,
      );
      if (!cosigned) {
        throw new WitnessRefusal('its answer holds no cosignature that verifies with its key');
      }
      this.sizes.set(witness.key.name, size);
      return cosigned.line;
    }
    throw new WitnessRefusal(`its size kept changing over ${ATTEMPTS} attempts`);
  }
}
