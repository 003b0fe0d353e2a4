/**
 * Normalised views of a message for the shield's phrase rules, each with an offset map back to the
 * original text so that every finding's span indexes the message the caller sent.
 *
 * - `folded`: lower case; accents, fullwidth forms and common Cyrillic/Greek homoglyphs folded to
 *   ASCII; curly quotes straightened; the leetspeak digits 0 1 3 4 5 7 read as o i e a s t;
 *   zero-width, bidi-control and soft-hyphen characters dropped; Unicode tag characters (the
 *   "ASCII smuggling" block U+E0020–U+E007E) decoded to the ASCII they hide; every run of
 *   whitespace collapsed to one space.
 * - `squeezed`: the folded view with everything but a–z dropped, so "i g n o r e", "ig-nore" and
 *   "i.g.n.o.r.e" all read "ignore".
 *
 * One linear pass each; no regular expressions.
 */
export interface TextView {
  text: string;
  /** For each character of `text`, the index in the original message where it starts… */
  starts: Int32Array;
  /** …and where it ends (exclusive). */
  ends: Int32Array;
}

/** Zero-width, bidi-control, invisible-operator and soft-hyphen code units. */
export function isInvisible(code: number): boolean {
  return (
    code === 0x00ad ||
    code === 0x180e ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2064) ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0xfeff
  );
}

function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

const FOLD_LIMIT = 0x3000;
/** Folded code unit for every code unit below FOLD_LIMIT (built once at load). */
const FOLD = new Uint16Array(FOLD_LIMIT);
for (let c = 0; c < FOLD_LIMIT; c++) {
  const lower = String.fromCharCode(c).toLowerCase();
  let folded = lower.length === 1 ? lower.charCodeAt(0) : c;
  if (c >= 0xc0 && c <= 0x24f) {
    const base = lower.normalize('NFD').charCodeAt(0);
    if (base < 0x80) folded = base;
  }
  FOLD[c] = folded;
}
const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't' };
for (const [digit, letter] of Object.entries(LEET))
  FOLD[digit.charCodeAt(0)] = letter.charCodeAt(0);
const HOMOGLYPHS: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ɡ: 'g',
  ο: 'o',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  ß: 's',
};
for (const [glyph, letter] of Object.entries(HOMOGLYPHS)) {
  FOLD[glyph.charCodeAt(0)] = letter.charCodeAt(0);
  FOLD[glyph.toUpperCase().charCodeAt(0)] = letter.charCodeAt(0);
}
for (const [quote, ascii] of [
  ['\u2018', "'"],
  ['\u2019', "'"],
  ['\u201c', '"'],
  ['\u201d', '"'],
  ['\u00ab', '"'],
  ['\u00bb', '"'],
  ['\u2013', '-'],
  ['\u2014', '-'],
] as const) {
  FOLD[quote.charCodeAt(0)] = ascii.charCodeAt(0);
}

function foldUnit(code: number): number {
  if (code < FOLD_LIMIT) return FOLD[code]!;
  // Fullwidth ASCII (U+FF01–FF5E) is the same letters in a wide font.
  if (code >= 0xff01 && code <= 0xff5e) return FOLD[code - 0xfee0]!;
  return code;
}

/** The code units as a string (Node's native UTF-16 decode; typed arrays are little-endian here). */
function toText(codes: Uint16Array, length: number): string {
  return Buffer.from(codes.buffer, codes.byteOffset, length * 2).toString('utf16le');
}

export function foldedView(raw: string): TextView {
  const n = raw.length;
  const codes = new Uint16Array(n);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  let k = 0;
  let pendingSpace = false;
  const push = (code: number, start: number, end: number) => {
    if (pendingSpace && k > 0) {
      codes[k] = 0x20;
      starts[k] = start;
      ends[k] = start;
      k++;
    }
    pendingSpace = false;
    codes[k] = code;
    starts[k] = start;
    ends[k] = end;
    k++;
  };
  for (let i = 0; i < n; i++) {
    const code = raw.charCodeAt(i);
    if (code === 0xdb40 && i + 1 < n) {
      const low = raw.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdc7f) {
        const ascii = low - 0xdc00;
        if (ascii === 0x20) pendingSpace = true;
        else if (ascii > 0x20 && ascii < 0x7f) push(foldUnit(ascii), i, i + 2);
        i++;
        continue;
      }
    }
    if (isInvisible(code)) continue;
    if (isSpace(code)) {
      pendingSpace = true;
      continue;
    }
    push(foldUnit(code), i, i + 1);
  }
  return { text: toText(codes, k), starts: starts.subarray(0, k), ends: ends.subarray(0, k) };
}

export function squeezedView(folded: TextView): TextView {
  const n = folded.text.length;
  const codes = new Uint16Array(n);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const code = folded.text.charCodeAt(i);
    if (code >= 0x61 && code <= 0x7a) {
      codes[k] = code;
      starts[k] = folded.starts[i]!;
      ends[k] = folded.ends[i]!;
      k++;
    }
  }
  return { text: toText(codes, k), starts: starts.subarray(0, k), ends: ends.subarray(0, k) };
}

/** The original-message span of `view.text.slice(start, end)` (end exclusive, start < end). */
export function toRawSpan(view: TextView, start: number, end: number): [number, number] {
  return [view.starts[start]!, view.ends[end - 1]!];
}
