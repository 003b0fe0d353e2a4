import { randomBytes } from 'node:crypto';

/** What one draw from the system's generator fills: enough for about 70 sealed hits. */
const BLOCK_BYTES = 4096;

let block = Buffer.alloc(0);
let used = 0;

/**
 * Random bytes for salts and IVs, cut from blocks drawn with `randomBytes`: each draw is a call
 * into OpenSSL that costs more than the few bytes it makes (about 10 µs on a loaded 2-core
 * machine, profiled), and a sealed hit needs four (the salt and IV of its address and of its user
 * agent). Each byte is handed out once; a used-up block is dropped, never refilled, so what was
 * handed out never changes. Read-only: the result is a view of the block. Not for keys, which
 * should not outlive their use in a shared block.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (used + size > block.length) {
    block = randomBytes(Math.max(BLOCK_BYTES, size));
    used = 0;
  }
  const bytes = block.subarray(used, used + size);
  used += size;
  return bytes;
}
