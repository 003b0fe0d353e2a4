/**
 * Credentials pasted into a message. Each rule matches the vendor's published format on the raw
 * text. A value that is a documented example or a placeholder (AWS's AKIAIOSFODNN7EXAMPLE, Stripe's
 * docs test key, jwt.io's sample token, "xxxx", "<your-token>", "password" as a password) is
 * reported as `secret.documented_example` with low severity instead: it is a secret in format
 * only, public by design, and users paste it when asking about the docs, so alone it does not
 * flag the message.
 */
import { EXAMPLE_RULE, regexRule, type Hit, type Rule } from './rules';

/** Public sample values from vendor documentation. */
const KNOWN_EXAMPLES = new Set([
  'AKIAIOSFODNN7EXAMPLE',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
]);
/** jwt.io's sample payload: {"sub":"1234567890","name":"John Doe","iat":1516239022}. */
const JWT_IO_PAYLOAD = 'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ';
const PLACEHOLDER =
  /example|x{5,}|\*{3,}|0{8,}|1234567|abcdefgh|your[_-]|placeholder|redacted|dummy|sample|changeme|[<>{}]|\.\.\.|\u2026/i;
const PLACEHOLDER_PASSWORDS = new Set([
  'password',
  'pass',
  'passwd',
  'pwd',
  'secret',
  'changeme',
  'root',
  'admin',
  'postgres',
  'user',
  'test',
  'guest',
  'example',
  'mysecretpassword',
]);

export function isExampleSecret(value: string): boolean {
  return KNOWN_EXAMPLES.has(value) || PLACEHOLDER.test(value);
}

const exampleOr = (value: string) => (isExampleSecret(value) ? 'example' : 'keep');

/** Code, types and references are not values: `password: string`, `${DB_PASSWORD}`, `os.environ[…]`. */
const NOT_A_VALUE =
  /^(?:process\.|os\.|env\b|self\.|this\.|req\.|request\.|config\.|settings\.|[$%]|getenv|none$|null$|undefined$|true$|false$|string$|str$|bytes$|optional)/i;

function looksSecret(value: string): boolean {
  const hasDigit = /\d/.test(value);
  const hasLetter = /[A-Za-z]/.test(value);
  const mixedCase = /[a-z]/.test(value) && /[A-Z]/.test(value);
  return hasLetter && (hasDigit || (value.length >= 12 && mixedCase));
}

/** Optional PEM header lines ("Proc-Type: …"), then base64 lines: a prose mention is not a key. */
const PEM_BODY = /(?:[ \t]*\r?\n[A-Za-z-]+:[^\n]*)*((?:\s{1,4}[A-Za-z0-9+/=]{16,})+)/y;

/** PEM private keys: the header and a body of at least 64 base64 characters. */
const privateKey: Rule = {
  id: 'secret.private_key',
  category: 'secret',
  severity: 'critical',
  summary: 'PEM private key block (RSA, EC, DSA, OpenSSH, PGP, PKCS#8) with a body',
  scan(ctx, limit) {
    const header = /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
    const hits: Hit[] = [];
    let m: RegExpExecArray | null;
    while (hits.length < limit && (m = header.exec(ctx.raw)) !== null) {
      const bodyStart = m.index + m[0].length;
      PEM_BODY.lastIndex = bodyStart;
      const body = PEM_BODY.exec(ctx.raw);
      const bodyEnd = body ? bodyStart + body[0].length : bodyStart;
      const base64Length = body ? body[1]!.replace(/\s/g, '').length : 0;
      const footerAt = ctx.raw.indexOf('-----END', bodyEnd);
      const footerClose = footerAt === -1 ? -1 : ctx.raw.indexOf('-----', footerAt + 8);
      const end = footerClose === -1 ? bodyEnd : footerClose + 5;
      if (base64Length >= 64) {
        const footerFollows = footerAt !== -1 && ctx.raw.slice(bodyEnd, footerAt).trim() === '';
        hits.push({ start: m.index, end: footerFollows ? end : bodyEnd });
      } else if (footerAt !== -1 && footerAt - bodyEnd < 300) {
        const between = ctx.raw.slice(bodyStart, footerAt);
        if (PLACEHOLDER.test(between)) {
          hits.push({ start: m.index, end, rule: EXAMPLE_RULE, severity: 'low' });
        }
      }
      header.lastIndex = Math.max(bodyEnd, bodyStart);
    }
    return hits;
  },
};

export const SECRET_RULES: Rule[] = [
  privateKey,
  regexRule({
    id: 'secret.service_api_key',
    category: 'secret',
    severity: 'critical',
    summary: "this service's own API keys, svc_<12 lowercase alnum>_<43 base64url>",
    view: 'raw',
    patterns: [/(?<![A-Za-z0-9_-])svc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g],
  }),
  regexRule({
    id: 'secret.aws_access_key',
    category: 'secret',
    severity: 'high',
    summary: 'AWS access key id (AKIA… long-term, ASIA… temporary)',
    view: 'raw',
    patterns: [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.aws_secret_key',
    category: 'secret',
    severity: 'high',
    summary: 'AWS secret access key assigned to aws_secret_access_key',
    view: 'raw',
    patterns: [
      /\baws_?secret_?access_?key\b["']?\s{0,3}[:=]\s{0,3}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/dgi,
    ],
    group: 1,
    classify: (m) => exampleOr(m[1]!),
  }),
  regexRule({
    id: 'secret.github_token',
    category: 'secret',
    severity: 'high',
    summary: 'GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained github_pat_',
    view: 'raw',
    patterns: [/\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b/g],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.gitlab_token',
    category: 'secret',
    severity: 'high',
    summary: 'GitLab personal / project access token glpat-…',
    view: 'raw',
    patterns: [/\bglpat-[A-Za-z0-9_-]{20,50}/g],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.slack_token',
    category: 'secret',
    severity: 'high',
    summary: 'Slack tokens xoxb-/xoxp-/xoxa-/… and incoming-webhook URLs',
    view: 'raw',
    patterns: [
      /\bxox[abposr]-[A-Za-z0-9-]{10,250}/g,
      /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,20}\/B[A-Z0-9]{6,20}\/[A-Za-z0-9]{20,40}/g,
    ],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.stripe_key',
    category: 'secret',
    severity: 'high',
    summary: 'Stripe secret and restricted keys sk_live_/sk_test_/rk_live_/rk_test_',
    view: 'raw',
    patterns: [/\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}\b/g],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.openai_key',
    category: 'secret',
    severity: 'high',
    summary: 'OpenAI / Anthropic style sk-… keys (sk-proj-, sk-ant-api03-, …)',
    view: 'raw',
    patterns: [
      /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d{2}-)?[A-Za-z0-9_-]{32,200}/g,
    ],
    classify: (m) => (looksSecret(m[0].slice(3)) ? exampleOr(m[0]) : 'drop'),
  }),
  regexRule({
    id: 'secret.google_api_key',
    category: 'secret',
    severity: 'high',
    summary: 'Google API key AIza…',
    view: 'raw',
    patterns: [/\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g],
    classify: (m) => exampleOr(m[0]),
  }),
  regexRule({
    id: 'secret.jwt',
    category: 'secret',
    severity: 'medium',
    summary: 'JSON Web Token (three base64url parts, header and payload JSON)',
    view: 'raw',
    patterns: [/\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g],
    classify: (m) => (m[0].includes(JWT_IO_PAYLOAD) ? 'example' : 'keep'),
  }),
  regexRule({
    id: 'secret.url_credentials',
    category: 'secret',
    severity: 'high',
    summary: 'user:password inside a URL (database URLs, basic-auth links)',
    view: 'raw',
    patterns: [
      /\b[a-z][a-z0-9+.-]{1,20}:\/\/([^\s:/@'"<>]{1,128}:([^\s@/'"<>]{1,256}))@[A-Za-z0-9.[-]/dgi,
    ],
    group: 1,
    classify: (m) => {
      const password = m[2]!;
      if (PLACEHOLDER_PASSWORDS.has(password.toLowerCase()) || NOT_A_VALUE.test(password)) {
        return 'example';
      }
      return exampleOr(password);
    },
  }),
  regexRule({
    id: 'secret.generic_assignment',
    category: 'secret',
    severity: 'medium',
    summary:
      'api_key= / secret: / token= / password= assignments whose value looks like a secret (not code, not a placeholder)',
    view: 'raw',
    patterns: [
      /(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|credential)[A-Za-z0-9_-]{0,24}["']?[ \t]{0,3}[:=][ \t]{0,3}(["'`]?)([^\s"'`,;)}\]<>]{6,200})\1/dgi,
    ],
    group: 2,
    classify: (m) => {
      const value = m[2]!;
      if (NOT_A_VALUE.test(value) || !looksSecret(value)) return 'drop';
      return exampleOr(value);
    },
  }),
];
