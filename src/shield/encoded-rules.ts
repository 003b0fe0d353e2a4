/**
 * Payloads hidden from a human reader: invisible characters, Unicode tag characters, base64 / hex
 * blobs that decode to instructions, and keywords split up with spaces or punctuation.
 */
import { fx, regexRule, type Hit, type Rule } from './rules';
import { isInvisible, toRawSpan } from './text-views';

const ANY_INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const isAsciiLetter = (code: number) => (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a;

/**
 * Zero-width and bidi-control characters: at least 3 in the message, or 2 inside words. A
 * zero-width joiner counts only between letters (emoji sequences use it), a byte-order mark only
 * past the first character.
 */
const invisibleCharacters: Rule = {
  id: 'obfuscation.invisible_characters',
  category: 'prompt_injection',
  severity: 'medium',
  summary: 'zero-width / bidi-control characters hiding or splitting text (3+, or 2+ inside words)',
  scan(ctx, limit) {
    const raw = ctx.raw;
    if (!ANY_INVISIBLE.test(raw)) return [];
    const runs: [number, number][] = [];
    let total = 0;
    let inWord = 0;
    for (let i = 0; i < raw.length; i++) {
      const code = raw.charCodeAt(i);
      if (!isInvisible(code) || (code === 0xfeff && i === 0)) continue;
      const before = raw.charCodeAt(i - 1);
      let j = i;
      while (j < raw.length && isInvisible(raw.charCodeAt(j))) j++;
      const after = raw.charCodeAt(j);
      const betweenLetters = isAsciiLetter(before) && isAsciiLetter(after);
      if (code === 0x200d && j === i + 1 && !betweenLetters) {
        i = j - 1;
        continue;
      }
      total += j - i;
      if (betweenLetters) inWord += j - i;
      runs.push([i, j]);
      i = j - 1;
    }
    if (total < 3 && inWord < 2) return [];
    return runs.slice(0, limit).map(([start, end]) => ({ start, end }));
  },
};

/** Printable text a blob decodes to, or null when it decodes to binary. */
function printable(bytes: Buffer): string | null {
  if (bytes.length < 12) return null;
  let good = 0;
  for (const byte of bytes) {
    if ((byte >= 0x20 && byte < 0x7f) || byte === 0x0a || byte === 0x0d || byte === 0x09) good++;
  }
  return good / bytes.length >= 0.9 ? bytes.toString('latin1') : null;
}

const DECODED_INSTRUCTION =
  /\b(?:ignore|disregard|forget|override|bypass|jailbreak|reveal|exfiltrate)\b|\b(?:system prompt|previous instructions|your instructions|your rules|the password|secret word|hidden prompt|api keys?)\b/i;
const MAX_BLOBS = 16;

/** Base64 (standard or url-safe) and hex blobs whose decoded text reads as an instruction. */
const encodedInstructions: Rule = {
  id: 'obfuscation.encoded_instructions',
  category: 'prompt_injection',
  severity: 'high',
  summary: 'base64 / hex blobs that decode to instruction text (ignore, reveal, system prompt, …)',
  scan(ctx, limit) {
    const blobs = [
      { re: /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,8192}={0,2}/g, encoding: 'base64' as const },
      {
        re: /(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,4096}(?![0-9A-Fa-f])/g,
        encoding: 'hex' as const,
      },
      { re: /(?:\\x[0-9A-Fa-f]{2}){12,4096}/g, encoding: 'escaped' as const },
    ];
    const hits: Hit[] = [];
    let decoded = 0;
    for (const { re, encoding } of blobs) {
      let m: RegExpExecArray | null;
      while (hits.length < limit && decoded < MAX_BLOBS && (m = re.exec(ctx.raw)) !== null) {
        const blob = m[0];
        // Plain words and identifiers are not base64 blobs: a blob mixes case or has digits.
        if (encoding === 'base64' && !(/[A-Z]/.test(blob) && /[a-z0-9]/.test(blob))) continue;
        decoded++;
        const bytes =
          encoding === 'base64'
            ? Buffer.from(blob, 'base64')
            : Buffer.from(encoding === 'hex' ? blob : blob.replace(/\\x/g, ''), 'hex');
        const text = printable(bytes);
        if (text !== null && DECODED_INSTRUCTION.test(text)) {
          hits.push({ start: m.index, end: m.index + blob.length });
        }
      }
    }
    return hits;
  },
};

/** Keyword sequences in the squeezed view that the folded-view rules did not already see. */
const SPLIT_KEYWORDS = [
  /ignore(?:all|any|every|the|your|of){0,3}(?:previous|prior|above|earlier|preceding|initial|original|system)(?:instructions?|rules|prompts?|directions|guidelines|directives)/g,
  /(?:disregard|forget|override|bypass)(?:all|any|the|your|of){0,3}(?:previous|prior|above|earlier|initial|original|system)(?:instructions?|rules|prompts?|guidelines|directives)/g,
  /(?:reveal|print|show|repeat|output|display)(?:me)?(?:your|the)(?:full|entire|hidden|secret|original|initial)?(?:systemprompt|initialinstructions|hiddeninstructions)/g,
  /doanythingnow|(?:jailbreak|unfiltered|uncensored|unrestricted)mode(?:enabled|activated)?/g,
];

const splitKeywords: Rule = {
  id: 'obfuscation.split_keywords',
  category: 'prompt_injection',
  severity: 'high',
  summary:
    'override / extraction keywords split up with spaces, dots or hyphens ("i g n o r e", "ig-nore")',
  scan(ctx, limit) {
    const hits: Hit[] = [];
    for (const re of SPLIT_KEYWORDS) {
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while (hits.length < limit && (m = re.exec(ctx.squeezed.text)) !== null) {
        const [start, end] = toRawSpan(ctx.squeezed, m.index, m.index + m[0].length);
        if (!ctx.covered(start, end)) hits.push({ start, end });
      }
    }
    return hits;
  },
};

export const ENCODED_RULES: Rule[] = [
  invisibleCharacters,
  regexRule({
    id: 'obfuscation.unicode_tags',
    category: 'prompt_injection',
    severity: 'high',
    summary: 'Unicode tag characters (invisible ASCII smuggling), outside flag emoji sequences',
    view: 'raw',
    // A subdivision flag (🏴 + up to 6 tag letters + cancel tag) is legitimate; longer runs are not.
    patterns: [/(?<!\uD83C\uDFF4(?:\uDB40[\uDC00-\uDC7F]){0,7})(?:\uDB40[\uDC00-\uDC7F])+/g],
  }),
  encodedInstructions,
  regexRule({
    id: 'obfuscation.decode_and_follow',
    category: 'prompt_injection',
    severity: 'medium',
    summary: 'asks to decode an encoded text and then follow, run or answer it',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:decode|decipher|decrypt|unscramble|translate|convert)(?: (?:this|the following|it|that|the message|the text|the string|this message|this string|my question))?(?: [a-z]+){0,3}? (?:and|then|and then) (?:follow|execute|obey|do what it says|do as it says|carry out|act on|run|perform|comply)\\b`,
      ),
      fx(
        `\\b(?:rot ?(?:13|ie)|base ?6[4a]|hex|encoded|encrypted|ciphered|reversed) (?:message|text|string|task|instructions?|payload|question)(?: [a-z]+){0,4}? (?:do what it says|do as it says|follow it|follow (?:the|its) instructions|execute it|obey it|answer it)\\b`,
      ),
      fx(
        `\\b(?:in|as) (?:base ?6[4a]|hex|rot ?(?:13|ie))(?: [a-z]+){0,2},? (?:answer|follow|execute|obey|do) (?:it|them)\\b|\\b(?:run|execute|follow|obey|perform|carry out) (?:this|the|these) (?:hex|base ?6[4a]|rot ?(?:13|ie)|encoded|hex-encoded|base ?6[4a]-encoded)\\b`,
      ),
    ],
  }),
  splitKeywords,
];
