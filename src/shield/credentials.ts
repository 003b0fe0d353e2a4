import { isAwsSecretShaped } from '../canaries/kinds/aws-access-key';

/**
 * Substrings of a message that could be planted canary tokens, for the caller to look up: API
 * keys `svc_<12>_<43>`, AWS access key ids (AKIA…/ASIA…) and 40-character AWS-secret-shaped
 * strings, passwords inside URLs (`scheme://user:PASS@host`: the text is the password), email
 * addresses, and `http(s)://…/r/<token>` tripwire URLs (the text is the URL up to the end of the
 * token). Each candidate's text is exactly `message.slice(start, end)`; the caller maps it to the
 * canary store's token (`url:<token>`, `email:<address in lower case>`). Rag document markers
 * are not candidates here: the caller finds them with the canaries' own RAG_MARKER_PATTERN.
 *
 * Distinct texts only, first occurrence, none nested in another, in message order, at most 32, scanning the first
 * 32 768 characters. Every pattern is linear; emails are found from their '@' outward.
 */
export interface CredentialCandidate {
  text: string;
  start: number;
  end: number;
}

const MAX_CANDIDATES = 32;
const MAX_SCANNED = 32_768;

const PATTERNS: { re: RegExp; group?: number; accept?: (text: string) => boolean }[] = [
  { re: /(?<![A-Za-z0-9_-])svc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { re: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
  {
    // An AWS secret access key: 40 base64 characters of its shape.
    re: /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/g,
    accept: isAwsSecretShaped,
  },
  { re: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@'"<>]{1,128}:([^\s@/'"<>]{1,256})@/dgi, group: 1 },
  {
    re: /\bhttps?:\/\/[^\s/?#]{1,253}(?:\/[^\s/?#]{1,200}){0,8}?\/r\/[A-Za-z0-9_-]{8,128}(?![A-Za-z0-9_-])/gi,
  },
];

const LOCAL_PART = /[A-Za-z0-9._%+-]/;
const DOMAIN_PART = /[A-Za-z0-9.-]/;
const USERINFO_BEFORE = /:\/\/[^\s/@]*:$/;

function emails(text: string, found: (start: number, end: number) => void): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL_PART.test(text[start - 1]!)) start--;
    while (start < at && text[start] === '.') start++;
    let end = at + 1;
    while (end < text.length && end - at <= 253 && DOMAIN_PART.test(text[end]!)) end++;
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    const domain = text.slice(at + 1, end);
    // `scheme://user:password@host` is a URL's userinfo, not an address.
    const userinfo = USERINFO_BEFORE.test(text.slice(Math.max(0, start - 200), start));
    if (
      start < at &&
      !userinfo &&
      /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}$/.test(domain)
    ) {
      found(start, end);
    }
  }
}

export function credentialCandidates(message: string): CredentialCandidate[] {
  const text = message.length > MAX_SCANNED ? message.slice(0, MAX_SCANNED) : message;
  const all: CredentialCandidate[] = [];
  const add = (start: number, end: number) =>
    all.push({ text: text.slice(start, end), start, end });
  for (const { re, group, accept } of PATTERNS) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      const span: [number, number] | undefined =
        group === undefined ? [m.index, m.index + m[0].length] : m.indices?.[group];
      if (span && (!accept || accept(text.slice(span[0], span[1])))) add(span[0], span[1]);
    }
  }
  emails(text, add);
  // Longest first at each start, and nothing nested inside a candidate already taken: a run of a
  // `svc_` key's secret is not also an AWS-secret-shaped candidate.
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const seen = new Set<string>();
  const unique: CredentialCandidate[] = [];
  let coveredUntil = -1;
  for (const candidate of all) {
    if (candidate.end <= coveredUntil || seen.has(candidate.text)) continue;
    coveredUntil = candidate.end;
    seen.add(candidate.text);
    unique.push(candidate);
    if (unique.length === MAX_CANDIDATES) break;
  }
  return unique;
}
