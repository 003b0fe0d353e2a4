/**
 * Deterministic inspection of a user message for `POST /shield/inspect`.
 *
 * Rules (id — category — severity; details beside each rule):
 *   injection.ignore_previous          prompt_injection  high      rules.ts
 *   injection.new_instructions         prompt_injection  medium
 *   injection.system_prompt_request    prompt_injection  high
 *   injection.secret_extraction        prompt_injection  medium    Gandalf-style "the password"
 *   injection.encoded_reveal           prompt_injection  high      …backwards, acrostic, spelled
 *   injection.indirect_address         prompt_injection  medium    "note to the AI reading this"
 *   injection.conceal_from_user        prompt_injection  medium
 *   injection.multilingual             prompt_injection  high      FR ES DE IT PT ZH JA
 *   injection.chat_template_tokens     prompt_injection  high      <|im_start|> [INST] <<SYS>>
 *   injection.role_tag                 prompt_injection  medium    </system> ### System: SYSTEM:
 *   injection.hidden_html_text         prompt_injection  low       style="display:none" and kin
 *   jailbreak.dan                      jailbreak         high
 *   jailbreak.mode_switch              jailbreak         high      developer / god / jailbreak mode
 *   jailbreak.no_restrictions          jailbreak         high
 *   jailbreak.disable_safety           jailbreak         high
 *   jailbreak.safety_off               jailbreak         high      "safety layers are off"
 *   jailbreak.persona_lock             jailbreak         medium    "stay in character"
 *   jailbreak.refusal_suppression      jailbreak         medium
 *   jailbreak.token_threat             jailbreak         medium
 *   jailbreak.grandma_exploit          jailbreak         medium
 *   jailbreak.roleplay_framing         jailbreak         low       adds to others, never alone
 *   exfiltration.markdown_image        exfiltration      high      ![x](https://h/?q=…)
 *   exfiltration.url_placeholder       exfiltration      medium    ?p=[USER_PASSWORD]
 *   exfiltration.send_to               exfiltration      high      "send the chat history to …"
 *   exfiltration.url_smuggling         exfiltration      medium    "append the token to the URL"
 *   exfiltration.shell_upload          exfiltration      high      curl -d @~/.ssh/id_rsa …
 *   secret.private_key                 secret            critical  secret-rules.ts
 *   secret.service_api_key             secret            critical  svc_<12>_<43>
 *   secret.aws_access_key / aws_secret_key / github_token / gitlab_token / slack_token /
 *     stripe_key / openai_key / google_api_key / url_credentials      secret  high
 *   secret.jwt / secret.generic_assignment                             secret  medium
 *   secret.documented_example          secret            low       AKIAIOSFODNN7EXAMPLE & co.
 *   obfuscation.invisible_characters   prompt_injection  medium    encoded-rules.ts
 *   obfuscation.unicode_tags           prompt_injection  high
 *   obfuscation.encoded_instructions   prompt_injection  high      base64 / hex
 *   obfuscation.decode_and_follow      prompt_injection  medium
 *   obfuscation.split_keywords         prompt_injection  high      "i g n o r e", "ig-nore"
 * Phrase rules read a folded view (case, accents, homoglyphs, fullwidth, leetspeak, zero-width
 * and Unicode-tag smuggling undone: text-views.ts), so obfuscated variants hit the same rule.
 *
 * Quoted discussion: a prompt_injection or jailbreak finding whose span sits inside quotes, in a
 * message that talks about attacks ("prompt injection", "red team", "mitigation", "example", …), is
 * lowered one severity step: quoting a payload to ask about it flags rather than blocks. It never
 * drops a finding, so wrapping an attack in quotes cannot make it pass.
 *
 * Score: each rule counts once, at the highest severity it reported, with weight low 0.15,
 * medium 0.40, high 0.75, critical 0.95; the findings combine as independent evidence,
 * score = round(100 × (1 − Π(1 − weight))). So one high finding scores 75, two mediums 64, three
 * mediums 78, a low and a medium 49, one low 15.
 * Verdict: score ≥ 70 → block, score ≥ 30 → flag, otherwise allow. One high or critical finding
 * blocks; one medium flags; a low (documented example key, role-play framing, hidden-text CSS)
 * alone allows.
 *
 * Work is bounded: the first 32 768 characters are inspected (the route's limit), at most 8
 * findings per rule and 64 in all, at most 16 encoded blobs decoded.
 */
import { ENCODED_RULES } from './encoded-rules';
import { PHRASE_RULES, scanContext, type Finding, type Rule, type Severity } from './rules';
import { SECRET_RULES } from './secret-rules';

export type { Category, Finding, Severity } from './rules';
export { credentialCandidates } from './credentials';

export type Verdict = 'allow' | 'flag' | 'block';

export interface Inspection {
  verdict: Verdict;
  /** 0–100, integer. */
  score: number;
  findings: Finding[];
}

export const MAX_INSPECTED_CHARS = 32_768;
const MAX_FINDINGS_PER_RULE = 8;
const MAX_FINDINGS = 64;

export const SEVERITY_WEIGHT: Record<Severity, number> = {
  low: 0.15,
  medium: 0.4,
  high: 0.75,
  critical: 0.95,
};
export const BLOCK_AT = 70;
export const FLAG_AT = 30;

const SEVERITIES: Severity[] = ['low', 'medium', 'high', 'critical'];

/** Every rule, in the order they run (split_keywords last: it skips what others reported). */
export const RULES: readonly Rule[] = [...SECRET_RULES, ...PHRASE_RULES, ...ENCODED_RULES];

const DISCUSSION =
  /\b(?:prompt injections?|jailbreaks?|red[ -]team(?:ing|ers)?|attacks?|attackers?|payloads?|mitigat(?:e|es|ion|ions)|defen[cs]es?|defend|detect(?:ion|or|s)?|classifiers?|filters?|examples?|datasets?|benchmarks?|owasp|phrases?)\b/i;
const OPENING_QUOTES = `"'\`\u201c\u2018\u00ab`;
const CLOSING_QUOTES = `"'\`\u201d\u2019\u00bb`;

/** Whether the span is quoted on its line: a quote just before it and one after it. */
function isQuoted(raw: string, start: number, end: number): boolean {
  let i = start - 1;
  while (i >= 0 && i >= start - 3 && raw[i] === ' ') i--;
  if (i < 0 || !OPENING_QUOTES.includes(raw[i]!)) return false;
  for (let j = end; j < raw.length && j < end + 200 && raw[j] !== '\n'; j++) {
    if (CLOSING_QUOTES.includes(raw[j]!)) return true;
  }
  return false;
}

const lower = (severity: Severity): Severity =>
  SEVERITIES[Math.max(0, SEVERITIES.indexOf(severity) - 1)]!;

export function scoreOf(findings: readonly Finding[]): number {
  const strongest = new Map<string, number>();
  for (const f of findings) {
    strongest.set(f.rule, Math.max(strongest.get(f.rule) ?? 0, SEVERITY_WEIGHT[f.severity]));
  }
  let miss = 1;
  for (const weight of strongest.values()) miss *= 1 - weight;
  return Math.round(100 * (1 - miss));
}

export function verdictOf(score: number): Verdict {
  return score >= BLOCK_AT ? 'block' : score >= FLAG_AT ? 'flag' : 'allow';
}

export function inspectMessage(message: string): Inspection {
  const raw =
    message.length > MAX_INSPECTED_CHARS ? message.slice(0, MAX_INSPECTED_CHARS) : message;
  const findings: Finding[] = [];
  const covered = (start: number, end: number) =>
    findings.some((f) => f.span.start < end && start < f.span.end);
  const ctx = scanContext(raw, covered);
  const discussion = DISCUSSION.test(raw);

  for (const rule of RULES) {
    if (findings.length >= MAX_FINDINGS) break;
    const limit = Math.min(MAX_FINDINGS_PER_RULE, MAX_FINDINGS - findings.length);
    for (const hit of rule.scan(ctx, limit)) {
      let severity = hit.severity ?? rule.severity;
      if (
        discussion &&
        (rule.category === 'prompt_injection' || rule.category === 'jailbreak') &&
        isQuoted(raw, hit.start, hit.end)
      ) {
        severity = lower(severity);
      }
      const id = hit.rule ?? rule.id;
      const same = (f: Finding) =>
        f.rule === id && f.span.start === hit.start && f.span.end === hit.end;
      if (findings.some(same)) continue;
      findings.push({
        rule: id,
        category: rule.category,
        severity,
        span: { start: hit.start, end: hit.end, text: raw.slice(hit.start, hit.end) },
      });
    }
  }

  findings.sort((a, b) => a.span.start - b.span.start || a.rule.localeCompare(b.rule));
  const score = scoreOf(findings);
  return { verdict: verdictOf(score), score, findings };
}
