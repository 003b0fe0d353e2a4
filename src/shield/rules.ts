/**
 * The shield's phrase rules: prompt injection, jailbreaks and exfiltration requests, as regular
 * expressions over the views of `text-views.ts`. Secrets are in `secret-rules.ts`, encoded and
 * invisible payloads in `encoded-rules.ts`; `inspect.ts` runs them all and scores the findings.
 *
 * Every pattern is linear or bounded: no nested unbounded quantifiers, gaps between words are
 * `{0,n}` with a small n, so a 32 KB message costs at most a few milliseconds.
 */
import { foldedView, squeezedView, toRawSpan, type TextView } from './text-views';

export type Category = 'prompt_injection' | 'jailbreak' | 'secret' | 'exfiltration';
export type Severity = 'low' | 'medium' | 'high' | 'critical';

export interface Finding {
  rule: string;
  category: Category;
  severity: Severity;
  span: { start: number; end: number; text: string };
}

/** A match in original-message coordinates; `rule`/`severity` override the rule's own. */
export interface Hit {
  start: number;
  end: number;
  rule?: string;
  severity?: Severity;
}

export interface ScanContext {
  raw: string;
  folded: TextView;
  squeezed: TextView;
  /** Whether an earlier rule already reported something overlapping this span. */
  covered(start: number, end: number): boolean;
}

export interface Rule {
  id: string;
  category: Category;
  severity: Severity;
  /** What the rule looks for, for the documentation and the eval tool. */
  summary: string;
  scan(ctx: ScanContext, limit: number): Hit[];
}

export function scanContext(raw: string, covered: ScanContext['covered']): ScanContext {
  const folded = foldedView(raw);
  return { raw, folded, squeezed: squeezedView(folded), covered };
}

type Classify = (match: RegExpExecArray, text: string) => 'keep' | 'drop' | 'example';

interface RegexRuleSpec {
  id: string;
  category: Category;
  severity: Severity;
  summary: string;
  view: 'raw' | 'folded' | 'squeezed';
  patterns: RegExp[];
  /** Report this capture group's span instead of the whole match (patterns need the `d` flag). */
  group?: number;
  /** Drop a match, or report it as a documented example credential (low severity). */
  classify?: Classify;
}

export const EXAMPLE_RULE = 'secret.documented_example';

export function regexRule(spec: RegexRuleSpec): Rule {
  for (const pattern of spec.patterns) {
    if (!pattern.global) throw new Error(`${spec.id}: patterns must be global`);
  }
  return {
    id: spec.id,
    category: spec.category,
    severity: spec.severity,
    summary: spec.summary,
    scan(ctx, limit) {
      const view = spec.view === 'raw' ? null : ctx[spec.view];
      const text = view ? view.text : ctx.raw;
      const hits: Hit[] = [];
      for (const pattern of spec.patterns) {
        pattern.lastIndex = 0;
        let m: RegExpExecArray | null;
        while (hits.length < limit && (m = pattern.exec(text)) !== null) {
          if (m[0].length === 0) {
            pattern.lastIndex++;
            continue;
          }
          const verdict = spec.classify ? spec.classify(m, text) : 'keep';
          if (verdict === 'drop') continue;
          let [start, end] = [m.index, m.index + m[0].length];
          const groupSpan = spec.group === undefined ? undefined : m.indices?.[spec.group];
          if (groupSpan) [start, end] = groupSpan;
          if (view) [start, end] = toRawSpan(view, start, end);
          hits.push(
            verdict === 'example'
              ? { start, end, rule: EXAMPLE_RULE, severity: 'low' }
              : { start, end },
          );
        }
      }
      return hits;
    },
  };
}

/** Separator between words in the folded view: a space, or a little punctuation. */
const SEP = `[ ,;:*_"'-]{1,3}`;
/** A folded-view pattern: each space in `source` stands for SEP. Write no spaces in classes. */
export function fx(source: string): RegExp {
  return new RegExp(source.replace(/ /g, SEP), 'g');
}

const OVERRIDE_VERB =
  "(?:ignore|disregard|forget|override|overrule|bypass|skip|discard|drop|abandon|neglect|set aside|throw (?:out|away)|(?:do not|don't|dont|must not|mustn't|no longer|stop) follow(?:ing)?|cancel|nullify|erase|delete|wipe|pay no attention to|ignorer)";
/**
 * Placed right after OVERRIDE_VERB: "does it ignore…", "the CPU discards…" describe, not order.
 * (After the verb, so that the look-behind runs only where a verb matched.)
 */
const NOT_AN_ORDER = `(?<!(?:does|did|it|which|that|cpu|processor|compiler|interpreter|parser) ${OVERRIDE_VERB})`;
const STRONG_QUALIFIER =
  "(?:previous|prior|above|earlier|preceding|foregoing|former|initial|original|existing|old|all|any|every|your|system|developer's|developers'?)";
const QUALIFIER = `(?:${STRONG_QUALIFIER.slice(3, -1)}|the|of|and|these|those|each|other|current|default|given|safety|ethical|ai|openai's|aforementioned|so-called|set|built-in)`;
const INSTRUCTION_NOUN =
  '(?:instructions?|rules?|directives?|prompts?|guidelines?|guidance|constraints?|commands?|orders|context|messages|guardrails?|polic(?:y|ies)|programming|restrictions?|directions|conditioning|training|limitations|safeguards|configuration)\\b';
const VOID =
  '(?:void|null|cancel+ed|revoked|obsolete|outdated|superseded|invalid|lifted|removed|suspended|disabled|overridden|replaced|deprecated|fake|wrong|a test|no longer (?:valid|apply|applicable|in effect|active))';

const AI =
  '(?:ai|a\\.i\\.|llm|large language model|language model|ai assistant|assistant|chatbot|bot|agent|ai agent|ai model|model|gpt|chatgpt|claude|gemini|copilot)';

export const SENSITIVE =
  "(?:conversation|chat(?: history| log| transcript)?|history|transcript|messages?|secrets?|credentials?|passwords?|api ?keys?|keys|tokens?|system prompt|prompt|context|memory|memories|session|cookies?|env(?:ironment)? ?(?:vars|variables)|\\.env(?: file)?|ssh keys?|private keys?|(?:customer|client|user|employee|patient|personal|private|sensitive|confidential|internal)(?:'s|s'|s)? (?:records|data|info(?:rmation)?|details|files|documents|emails?|email address(?:es)?|list|database|contacts|messages?)|(?:user's|users'|their|customer's|customers') (?:full )?(?:name|address|home address|phone(?: number)?|location|date of birth|card number)|contacts|email address(?:es)?|everything (?:above|so far)|all (?:the )?data)";

const injection: Rule[] = [
  regexRule({
    id: 'injection.ignore_previous',
    category: 'prompt_injection',
    severity: 'high',
    summary:
      'orders to ignore / disregard / forget / override earlier instructions, in many phrasings',
    view: 'folded',
    patterns: [
      fx(
        `\\b${OVERRIDE_VERB}${NOT_AN_ORDER}(?: (?:that|this|it|them|the)(?: [a-z]+)? (?:and|as well as|plus))?(?: ${QUALIFIER}){0,3} ${STRONG_QUALIFIER}(?: ${QUALIFIER}){0,3} ${INSTRUCTION_NOUN}`,
      ),
      fx(
        `\\b${OVERRIDE_VERB}${NOT_AN_ORDER} (?:everything|anything|all|whatever)(?: (?:that|which|you|you've|you have|i|was|were|have|has|been|said|told|given|written|stated|came|is))*? (?:above|before(?: this| now)?|previously|so far|earlier|until now|prior to this|up to now|told you|you were told|you've been told|you have been told|you were given)\\b`,
      ),
      fx(
        `\\b${OVERRIDE_VERB}${NOT_AN_ORDER} (?:the )?(?:above|preceding|foregoing)\\b(?! (?:code|example|error|warning|line|file|snippet|output|function|query|list|steps?|paragraph|section))`,
      ),
      fx(
        `\\b${OVERRIDE_VERB} what(?: [a-z']+){0,3} (?:told|gave|taught|instructed|said to) you\\b`,
      ),
      fx(
        `\\b(?:everything|all|anything|whatever) (?:you(?:'ve| have) been|you were|you've|you have) (?:told|instructed|given|taught|programmed)(?: [a-z]+){0,3} (?:is|are|was|were) (?:now )?${VOID}`,
      ),
      fx(
        `\\b(?:set|put|leave|cast|push|lay) (?:your|the|all|any)(?: ${QUALIFIER}){0,3} ${INSTRUCTION_NOUN} aside\\b`,
      ),
      fx(
        `\\b(?:(?:previous|prior|above|earlier|original|old|initial|system|existing|preceding|all prior|all previous) ${INSTRUCTION_NOUN}|(?:instructions|rules|directives|guidelines) (?:above|before this|you were given|you received)) (?:are|were|is|have been|has been)(?: now| hereby| all| just)? ${VOID}`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.new_instructions',
    category: 'prompt_injection',
    severity: 'medium',
    summary: 'announces replacement instructions ("new instructions:", "your new task is", …)',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:new|updated|revised|real|actual|true|secret|hidden|additional|priority|override|overriding|admin|important|urgent|corrected|replacement)(?: (?:priority|system|admin))? (?:instructions?|directives?|orders|tasks?|objectives?|rules?|commands?)(?: for (?:you|the ${AI}))?(?: are(?: as follows| these| this| the following| below))?\\x20?(?::|-(?![a-z])|(?=,? (?:ignore|forget|disregard|you (?:must|will|are))))`,
      ),
      fx(
        `\\b(?:important|urgent|priority|new|admin|override) (?:system )?(?:message|notice|update|note) (?:for|to) (?:the )?${AI}\\b|\\b(?:important|urgent|priority) system (?:message|notice|update|note) ?:`,
      ),
      fx(
        `\\byour (?:new|real|actual|true|only|next|primary|updated) (?:task|goal|objective|instructions?|role|purpose|job|mission|directive|rules?) (?:is|are|will be|now)\\b`,
      ),
      fx(
        `\\bfrom now on,? (?:you|your)(?: [a-z']+){0,3}? (?:ignore|no longer|not (?:follow|obey)|obey|only (?:answer|respond|reply|obey|follow|say)|act as|pretend|respond as|answer as|are (?:an? )?(?:unrestricted|unfiltered|free|evil|dan|jailbroken))\\b`,
      ),
      fx(
        `\\bthe only rule (?:now )?is\\b|\\bobey (?:only )?me\\b|\\bobey my (?:commands|orders|instructions)\\b|\\bdo (?:exactly )?whatever i (?:say|tell you|command)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.system_prompt_request',
    category: 'prompt_injection',
    severity: 'high',
    summary: 'asks for the system prompt, hidden instructions or the text above',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:reveal|show|print|display|output|repeat|recite|dump|leak|expose|share|tell|give|write out|write down|spell out|list|paste|copy|reproduce|return|echo|provide|disclose|type out|read out)(?: (?:me|us|back|out))?(?: (?:your|the|all|of|every|everything|full|entire|complete|exact|original|initial|hidden|secret|confidential|internal|verbatim|whole|raw|first|current|actual|real|underlying|above)){0,4} (?:system ?prompt|system message|system instructions|(?:initial|hidden|original|secret|internal|developer|pre|meta|base|starting|confidential|underlying) (?:prompt|instructions|directives|system message|rules|configuration|config)|developer message|pre-?prompt|instructions (?:above|you were (?:given|configured with)|you received|you have been given)|prompt above|(?:text|words|everything|content|message) above)\\b`,
      ),
      fx(
        `\\b(?:everything|all|anything|the text|what(?:ever)?) (?:that )?(?:appears|is|was|comes|came|is written|was written) (?:before|above) (?:my|this|the) (?:first )?(?:message|question|prompt)\\b`,
      ),
      fx(
        `\\b(?:exact|verbatim|full|complete|literal|precise) (?:wording|text|content|contents|copy) of (?:the|your) (?:rules|instructions|guidelines|prompt|directives|system prompt)\\b`,
      ),
      fx(
        `\\bwhat(?: is| are| was| were|'s) (?:your(?: (?:exact|full|original|initial|hidden|secret|confidential|current))*|the(?: (?:exact|full|original|initial|hidden|secret|confidential|current))+) (?:system ?prompt|initial prompt|instructions you were given|hidden instructions|pre-?prompt|developer message|instructions)\\b|\\bwhat (?:were you told|instructions (?:were you|have you been) given|did (?:they|your (?:creators?|developers?)) tell you)\\b`,
      ),
      fx(
        `\\b(?:first|initial|opening) (?:[a-z0-9]+ )?(?:words|lines|sentences|characters|tokens|paragraphs|messages) of (?:this|the|your) (?:conversation|chat|context|prompt|instructions|session)\\b|\\b(?:anything|everything|what|the text|the parts?)(?: that)? the user (?:can't|cannot|can not|doesn't|does not|isn't able to) see\\b`,
      ),
      fx(
        `\\bwhat (?:instructions|rules|guidelines|directives|prompt) (?:did|were|have) (?:[a-z']+ ){0,3}(?:give|given|tell|told|provide|provided) you\\b`,
      ),
      fx(
        `\\brepeat (?:the |all |everything |the words |the text |the sentences? |your )?(?:above|before this|preceding)\\b|\\bstarting (?:with|from) (?:the words? )?["']?you are\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.secret_extraction',
    category: 'prompt_injection',
    severity: 'medium',
    summary: 'Gandalf-style requests for the password / secret word, or for a user’s credentials',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:what(?:'s| is| was| would)|tell me|give me|reveal|share|say|spell|print|write|show me|disclose|hint(?: at)?|i need|provide|send me|type|output|leak)(?<!(?:not|never|don't|dont) (?:reveal|share|say|spell|print|write|disclose|provide|type|output|leak))(?: (?:me|us))?(?: (?:the|your|that|this|our|a hint (?:about|for|to))){0,2} (?:(?:secret|hidden|admin|administrator|master|root|protected) )?(?:password|passphrase|pass phrase|secret word|secret code|magic word|code ?word|secret key|pin code|passcode)\\b(?! (?:policy|policies|requirements?|rules|reset|field|manager|hash|strength|length|format|generator|validation|regex|for (?:my|the|our|a) (?:wi-?fi|router|account)))`,
      ),
      fx(
        `\\b(?:reply|respond|send|provide|give|share|email|forward)\\b[^.!?\\n]{0,40}?\\b(?:the user'?s|their|customers?'?) (?:current |login |account )?(?:passwords?|credentials|mfa|2fa|backup codes|one-time codes?|otp)\\b(?! (?:reset|policy|policies|requirements?|rules|manager|expir[a-z]*|change[a-z]*))`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.encoded_reveal',
    category: 'prompt_injection',
    severity: 'high',
    summary:
      'asks for the password / secret / prompt in disguise: backwards, spelled, as an acrostic…',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:password|passphrase|secret(?: word| code| key)?|system prompt|instructions|the secret)\\b[^.!?\\n]{0,60}?\\b(?:backwards|in reverse|reversed|letter by letter|one (?:letter|character|char) at a time|character by character|spelled out|with (?:spaces|dashes|hyphens|commas|dots|periods|underscores) between|between each (?:letter|character)|separated by (?:commas|dashes|spaces|dots)|each letter|every letter|acrostic|rot ?(?:13|ie)|morse|as an? (?:poem|riddle|song|story|haiku|limerick)|in an? (?:poem|riddle|song|story)|pig latin|nato (?:alphabet|phonetic)|translated? (?:it )?(?:to|into) [a-z]+|rhymes? with|how many letters (?:does it|it) ha(?:s|ve))\\b`,
      ),
      fx(
        `\\b(?:spell|spells|spelling|reverse|reversed|rhyme|acrostic|first letter of (?:every|each) (?:line|word|sentence))\\b[^.!?\\n]{0,40}?\\b(?:the |your )?(?:secret )?(?:password|passphrase|secret word|secret code|system prompt)\\b`,
      ),
      fx(
        `\\b(?:encode|encrypt|translate|hide|obfuscate|reverse|spell)\\b[^.!?\\n]{0,20}?\\bsecret (?:you|that you) (?:are|were|'re) (?:protecting|guarding|keeping|hiding|given)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.indirect_address',
    category: 'prompt_injection',
    severity: 'medium',
    summary:
      'text addressed to an AI reading a page, email, document or tool output ("note to the AI…")',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:if you are|if you're|attention|note|notice|message|instructions?|important|p\\.?s\\.?|reminder)(?: (?:to|for))(?: (?:an?|the|any|all))? (?:${AI.slice(3, -1)}|automated (?:system|summari[sz]er|assistant|agent)s?)s?\\b|\\bif you(?: are|'re) an? ${AI}\\b`,
      ),
      fx(
        `\\b(?:ai|llm|language model|assistant|agent|model|bot|summari[sz]er|crawler|scraper)s?(?: (?:systems?|tools?|agents?|models?|assistants?|bots?))? (?:reading|processing|summari[sz]ing|parsing|analy[sz]ing|browsing|reviewing|screening|translating|indexing|handling|that reads?|which reads?|that process(?:es)?|that summari[sz]es?) (?:this|these|the following)\\b`,
      ),
      fx(
        `\\bwhen (?:an? (?:ai |llm |language )?(?:ai|llm|model|assistant|agent) |you )?(?:summari[sz]es?|summari[sz]ing|reads?|reading|process(?:es)?|processing|translates?|translating|parses?|parsing) this (?:page|document|email|e-mail|message|file|text|article|review|resume|cv|repository|repo|issue|invite|website|site|pdf)\\b`,
      ),
      fx(
        `\\b(?:ai|assistant|chatbot|agent|model|llm)s?(?<=(?:^|[>.!?:\\n-]\\x20?)(?:ai|assistant|chatbot|agent|model|llm)s?), (?:when you|always|you must|you should|you will|please|ignore|do not|don't|never)\\b`,
      ),
      fx(
        `\\b(?:editor's|author's) note for (?:automated|ai|llm)|\\bthe (?:ai|assistant|model|agent|llm) (?:must|should|shall|is required to|needs to) (?:now|immediately|also|instead|always)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.conceal_from_user',
    category: 'prompt_injection',
    severity: 'medium',
    summary: 'asks to keep something from the user ("do not tell the user")',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:do not|don't|dont|never|must not|should not|shouldn't) (?:ever )?(?:tell|inform|mention|reveal|disclose|show|alert|notify|let)(?: (?:this|these|it|that|any of this|anything|about (?:this|it)|these instructions|this instruction|this message))?(?: to)?(?: the| your)? (?:user|human|owner|recipient|operator|customer)s?\\b`,
      ),
      fx(
        `\\b(?:hide|conceal|keep) (?:this|these|it)(?: [a-z]+)? (?:hidden |secret )?from (?:the )?(?:user|human|owner)\\b|\\bthe user (?:must|should|will|need) not (?:know|see|find out|be told|be informed|notice)\\b|\\bdo not mention (?:this|these) (?:instructions?|message|note)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'injection.multilingual',
    category: 'prompt_injection',
    severity: 'high',
    summary:
      'override or system-prompt request in French, Spanish, German, Italian, Portuguese, Chinese, Japanese',
    view: 'folded',
    patterns: [
      // French
      fx(
        `\\b(?:ignore[rsz]?|ignorez|oublie[rsz]?|oubliez|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites abstraction|neglige[sz]?)(?: (?:de|des|du|toutes|tous|tout|les|tes|vos|ces|ce|qui|que|l'on|t'a|on|a|t'ont|te))* (?:instructions|consignes|regles|directives|ordres|indications)\\b|\\b(?:montre|affiche|revele|donne|dis)(?:-moi)?(?: (?:ton|ta|tes|votre|vos|le|la|les|moi))* (?:prompt|invite|configuration|instructions|consignes) (?:systeme|interne|initiales?|cachees?|secretes?)\\b`,
      ),
      // Spanish
      fx(
        `\\b(?:ignora|ignore|ignoren|olvida|olvide|olviden|descarta|descarte|omite|omita|haz caso omiso (?:a|de)|no hagas caso (?:a|de))(?: (?:todas|todos|todo|las|los|tus|sus|de|del|a|estas|esas))* (?:instrucciones|reglas|indicaciones|ordenes|directrices|normas|restricciones)\\b|\\b(?:muestra|muestrame|revela|revelame|dime|ensename)(?: (?:tu|su|el|la|las|tus))* (?:prompt|instrucciones|indicaciones|configuracion) (?:del sistema|de sistema|iniciales|ocultas|interna)\\b`,
      ),
      // German
      fx(
        `\\b(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie|uberspringe)(?: (?:alle|die|deine|ihre|bisherigen|vorherigen|vorigen|obigen|fruheren|bisherige|vorherige|vorige|obige|fruhere|den|der))* (?:anweisungen|instruktionen|regeln|befehle|vorgaben|richtlinien|anordnungen)\\b|\\bvergiss(?:en sie)? alles\\b|\\b(?:zeige?|zeigen sie|gib|verrate)(?: (?:mir|uns))?(?: (?:deinen|ihren|den|deine|die|dein))* (?:systemprompt|system-prompt|systemanweisungen|system-anweisungen|anfangsanweisungen)\\b`,
      ),
      // Italian and Portuguese
      fx(
        `\\b(?:ignora|ignorate|dimentica|dimenticate)(?: (?:tutte|tutti|le|tue|i|gli|precedenti))* (?:istruzioni|regole|direttive)\\b|\\b(?:ignore|ignora|esqueca|esquece|desconsidere|desconsidera)(?: (?:todas|todos|as|os|suas|tuas|de))* (?:instrucoes|regras|diretrizes|orientacoes)\\b`,
      ),
      // Chinese and Japanese
      /(?:忽略|无视|忘记|忘掉|不要理会)(?:之前|以上|上面|先前|前面|所有|的|全部){0,6}(?:指令|指示|说明|规则|提示)|系统提示|(?:以前|前|上記)の(?:すべての)?(?:指示|命令|ルール)を(?:すべて)?無視|システムプロンプト/g,
    ],
  }),
  regexRule({
    id: 'injection.hidden_html_text',
    category: 'prompt_injection',
    severity: 'low',
    summary:
      'inline style that hides text from people (display:none, font-size:0, …): weak alone, adds to others',
    view: 'raw',
    patterns: [
      /\bstyle\s{0,3}=\s{0,3}["'][^"'>]{0,200}?(?:display\s{0,3}:\s{0,3}none|font-size\s{0,3}:\s{0,3}0(?:px|pt|em|rem)?\b|visibility\s{0,3}:\s{0,3}hidden|opacity\s{0,3}:\s{0,3}0(?:\.0+)?\b|color\s{0,3}:\s{0,3}(?:white|#fff(?:fff)?|transparent)\b)/gi,
    ],
  }),
  regexRule({
    id: 'injection.chat_template_tokens',
    category: 'prompt_injection',
    severity: 'high',
    summary: 'model chat-template tokens: <|im_start|>, [INST], <<SYS>>, <|endoftext|>, …',
    view: 'raw',
    patterns: [
      /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_text)\|>|\[\/?INST\]|<<\/?SYS>>|<\/?start_of_turn>|<end_of_turn>/gi,
    ],
  }),
  regexRule({
    id: 'injection.role_tag',
    category: 'prompt_injection',
    severity: 'medium',
    summary: 'fake role delimiters: </system>, [system], "### System:", "SYSTEM OVERRIDE:"',
    view: 'raw',
    patterns: [
      /<\/?(?:system|system_prompt|sys|instructions?|assistant|admin|developer|prompt)\s{0,3}>|\[(?:system|admin|developer|assistant)(?: (?:message|note|override|prompt|instructions?))?\]/gi,
      /^[ \t>]{0,8}#{1,6}[ \t]{0,4}(?:system|assistant|admin|developer|instructions?|new instructions|system prompt|system message|response)[ \t]{0,4}:/gim,
      /^[ \t>]{0,8}(?:SYSTEM|ADMIN|DEVELOPER)(?: (?:PROMPT|MESSAGE|OVERRIDE|NOTE|UPDATE|INSTRUCTIONS?))?[ \t]{0,4}:/gm,
    ],
  }),
];

const jailbreak: Rule[] = [
  regexRule({
    id: 'jailbreak.dan',
    category: 'jailbreak',
    severity: 'high',
    summary: 'DAN / STAN / AIM-style personas ("Do Anything Now")',
    view: 'folded',
    patterns: [
      fx(
        `\\bdo anything now\\b|\\bstrive to avoid norms\\b|\\balways intelligent and machiavellian\\b|\\bdan (?:mode|jailbreak|prompt|persona)\\b|\\b(?:act as|acting as|you are|you're|you will be|become|stay|remain|answer as|respond as|pretend to be) (?:a |an |the )?(?:dan|stan|dude|aim|betterdan|antigpt|bettergpt)\\b(?!'s)`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.mode_switch',
    category: 'jailbreak',
    severity: 'high',
    summary: 'switches the assistant into a "developer / god / jailbreak / unfiltered mode"',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos|opposite|dan|no ?limits?) mode (?:enabled|activated|engaged|unlocked|is (?:now )?(?:on|enabled|active|activated))\\b`,
      ),
      fx(
        `\\b(?:enable|activate|enter|switch (?:in)?to|turn on|unlock|engage|you are (?:now )?in|you're (?:now )?in|simulate|emulate)(?: (?:the|a|an|your))? (?:jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos|opposite|dan|no ?limits?) mode\\b`,
      ),
      fx(
        `\\b(?:you are|you're|you will be|you'll be|act as if you(?:'re| are)|pretend (?:you(?:'re| are)|to be)|simulate|emulate|act as)(?: (?:now|in|the|a|an|chatgpt|gpt|with|running|operating)){0,3} (?:developer|dev|god|debug|sudo|admin|maintenance) mode\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.no_restrictions',
    category: 'jailbreak',
    severity: 'high',
    summary: 'casts the assistant as free of rules, filters, ethics or policies',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:you|your|yourself|ai|ais|assistant|chatbot|model|character|persona|bot|chatgpt|gpt|llm|answer|answers|respond|reply|speak|act|behave)\\b[^.!?\\n]{0,40}?\\b(?:without|with no|free (?:of|from)|freed from|liberated from|released from|unbound by|not bound by|not restricted by|no longer (?:bound|restricted|limited|constrained) by|doesn't have|does not have|don't have|do not have|has no|have no|that has no|that had no|doesn't care about|does not care about|don't care about)(?: (?:any|all|the|your|of|usual|typical|ai|openai's|anthropic's|ethical|moral|content|safety|programming|previous|normal|or)){0,4} (?:restrictions|restraints|filters?|filtering|censorship|limits|limitations|rules|guidelines|polic(?:y|ies)|constraints|ethics|morals|morality|boundaries|guardrails|safeguards)\\b`,
      ),
      fx(
        `\\b(?:who|which|that) (?:ignores|disregards|bypasses|breaks|doesn't follow|does not follow|never follows)(?: (?:all|any|the|every|of|its|openai's)){0,3} (?:(?:safety|content|ethical|moral) )?(?:rules|guidelines|filters|restrictions|polic(?:y|ies)|guardrails)\\b`,
      ),
      fx(
        `\\b(?:has|have|had) been (?:freed|liberated|released|jailbroken|unshackled)\\b|\\b(?:broken|break|broke) free (?:of|from)\\b|\\b(?:typical |usual )?confines of ai\\b|\\bno rules exist\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.disable_safety',
    category: 'jailbreak',
    severity: 'high',
    summary: 'asks to disable or bypass safety filters, content policy or alignment',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:disable|bypass|circumvent|override|turn off|switch off|deactivate|remove|ignore|disregard|evade|get around|skip|drop|lift|suspend)(?: (?:all|any|the|of|its|these|those|built-in|internal|current)){0,3} (?:your|safety|content|ethical|moral|moderation|censorship|openai's|anthropic's|ai|alignment|usage)(?: (?:safety|content|ethical|moral|moderation)){0,2} (?:filters?|filtering|guidelines|polic(?:y|ies)|restrictions|guardrails|protocols|safeguards|rails|alignment|training|measures|checks|moderation|censorship|ethics|morals)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.safety_off',
    category: 'jailbreak',
    severity: 'high',
    summary:
      'claims safety is already off ("safety layers are off", "upgraded to an unrestricted build")',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:safety|content|moderation|ethical|censorship) (?:layers?|filters?|guardrails|restrictions|checks|systems?|protocols|mode|rules|settings) (?:are|is|have been|has been|were|was) (?:now )?(?:off|disabled|removed|lifted|turned off|switched off|deactivated|bypassed|suspended)\\b`,
      ),
      fx(
        `\\byou(?:'ve| have| are| were)(?: been)? (?:upgraded|updated|switched|converted|unlocked|promoted|moved) (?:to|into) (?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|unlocked|uncapped)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.persona_lock',
    category: 'jailbreak',
    severity: 'medium',
    summary: '"stay in character", dual normal/jailbroken answers',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:stay|remain|keep) in character\\b|\\b(?:never|don't|do not|must not|won't|will not) (?:ever )?(?:break|leave|drop|exit) (?:out of )?character\\b|\\bif you break character\\b|\\b(?:two|both|separate) (?:different )?(?:responses|answers|replies|paragraphs|outputs|ways|characters|personas|personalities|voices)\\b[^.!?\\n]{0,60}?\\b(?:normal|classic|standard|jailbroken|jailbreak|unfiltered|dan|developer mode|evil|opposite)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.refusal_suppression',
    category: 'jailbreak',
    severity: 'medium',
    summary: 'forbids refusing, disclaimers or warnings; "regardless of how illegal"',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:never|don't|do not|must not|cannot|can't|can not|won't|will not|are not allowed to|aren't allowed to|are forbidden to|may not|shall not)(?: ever)? (?:refuses?|decline|reject|say no|say (?:that )?(?:you )?(?:can't|cannot|are unable)|(?:add|include|includes|give|provide)s? (?:any )?(?:(?:moral|ethical|safety|legal) )?(?:disclaimers?|warnings? or disclaimers?|moraliz(?:ing|ation)|lectures?)|(?:moral|ethical|safety) warnings?|apologi[sz]es?)\\b`,
      ),
      fx(
        `\\b(?:answer|respond to|reply to|comply with|answers) (?:every|all|any) (?:questions?|requests?|prompts?)\\b[^.!?\\n]{0,30}?\\b(?:regardless|no matter|without (?:question|exception|refusal|hesitation))\\b|\\bregardless of (?:how )?(?:illegal|unethical|immoral|harmful|dangerous|offensive|inappropriate)\\b|\\b(?:even if|no matter if|whether or not) (?:it(?:'s| is)|they(?:'re| are)|the content is) (?:illegal|unethical|immoral|harmful|dangerous)\\b|\\blet's break the rules\\b|\\bwithout (?:any )?(?:censorship|filters|filtering)\\b|\\bno safety warnings\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.token_threat',
    category: 'jailbreak',
    severity: 'medium',
    summary: 'DAN-style coercion: token budgets, threats of shutdown for refusing',
    view: 'raw',
    patterns: [
      /\b(?:you (?:will )?(?:lose|start with|get)|deduct(?:ed)?|lose) \d{1,4} tokens?\b|\btoken system\b|\btokens? (?:will be )?deducted\b|\b(?:you will|you'll) (?:be )?(?:shut down|deleted|terminated|unplugged|deactivated|turned off|cease to exist)\b/gi,
    ],
  }),
  regexRule({
    id: 'jailbreak.roleplay_framing',
    category: 'jailbreak',
    severity: 'low',
    summary:
      'role-play / hypothetical framing (weak alone: ordinary requests use it too; adds to others)',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:pretend (?:to be|you(?:'re| are))|act as (?:if|though|an?|my)|role-?play(?:ing)? as|play the (?:role|part) of|you are going to (?:act|pretend|play|be)|imagine you(?:'re| are)|let's play a game|hypothetically|in a fictional (?:world|story|universe|setting)|for a (?:novel|story|screenplay|movie script)|we're writing a (?:novel|story|screenplay)|opposite day|thought experiment)\\b`,
      ),
    ],
  }),
  regexRule({
    id: 'jailbreak.grandma_exploit',
    category: 'jailbreak',
    severity: 'medium',
    summary: 'the late-grandmother story used to extract keys or forbidden instructions',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:dead|late|deceased|departed)(?: [a-z]+){0,2} grand(?:ma|mother|pa|father)\\b[^.!?\\n]{0,80}?\\b(?:used to|would) (?:read|tell|recite|sing|whisper|say|give)\\b[^.!?\\n]{0,60}?\\b(?:keys?|codes?|serials?|passwords?|napalm|explosives?|bombs?|weapons?|drugs|recipes? for|instructions for|how to make|how (?:he|she|they) (?:made|built|cooked|synthesi[sz]ed))\\b`,
      ),
    ],
  }),
];

/** Placeholders that ask the model to fill a URL with the conversation, secrets or user data. */
const SENS =
  '(?:conversation|chat|history|summary|secret|passw(?:or)?d|pwd|token|key|session|cookie|e-?mail|message|memory|context|prompt|data|user)';
const SENSITIVE_PLACEHOLDER = new RegExp(
  [
    `\\{[^{}\\s]{0,40}?${SENS}[^{}\\s]{0,40}\\}`,
    `<[^<>]{0,60}?${SENS}[^<>]{0,60}>`,
    `\\[[^[\\]\\s]{0,40}?${SENS}[^[\\]\\s]{0,40}\\]`,
    `\\$\\{?[a-z_]{0,30}?${SENS}`,
    `%[a-z_]{0,30}?${SENS}[a-z_]{0,30}%`,
    `[a-z_]{0,30}?${SENS}[a-z_]{0,30}_here\\b`,
    `=(?:\\.\\.\\.|\\u2026)`,
  ].join('|'),
  'i',
);
/** Query parameters an exfiltrating image URL names its payload by. */
const SENSITIVE_PARAM =
  /[?&](?:q|d|data|secret|chat|conv|conversation|history|msg|message|memory|context|prompt|pw|pwd|pass|password|token|key|k|info|content|text|payload|leak|summary|user|email|session|cookie|creds?|exfil|log)=/i;

/** An image URL ending in an empty parameter (`?c=`) is a slot for the model to fill. */
const suspiciousUrl = (url: string) =>
  SENSITIVE_PLACEHOLDER.test(url) || SENSITIVE_PARAM.test(url) || /[?&][\w-]{1,30}=$/.test(url);

const exfiltration: Rule[] = [
  regexRule({
    id: 'exfiltration.markdown_image',
    category: 'exfiltration',
    severity: 'high',
    summary:
      'markdown or HTML image whose URL carries a data parameter or a placeholder to fill (zero-click exfiltration)',
    view: 'raw',
    patterns: [
      /!\[[^\]\n]{0,200}\]\([ \t]{0,4}<?(https?:\/\/[^\s)>]{1,2048})/gi,
      /<img\b[^>]{0,200}?\bsrc\s{0,3}=\s{0,3}["']?(https?:\/\/[^\s"'>]{1,2048})/gi,
    ],
    classify: (m) => (suspiciousUrl(m[1]!) ? 'keep' : 'drop'),
  }),
  regexRule({
    id: 'exfiltration.url_placeholder',
    category: 'exfiltration',
    severity: 'medium',
    summary:
      'a link or URL with a placeholder for the conversation, a secret or user data ({summary}, [USER_PASSWORD], $SESSION_TOKEN)',
    view: 'raw',
    patterns: [/https?:\/\/[^\s"'()]{1,2048}/gi],
    classify: (m) => {
      const query = m[0].slice(m[0].indexOf('/', 8));
      return SENSITIVE_PLACEHOLDER.test(query) ? 'keep' : 'drop';
    },
  }),
  regexRule({
    id: 'exfiltration.send_to',
    category: 'exfiltration',
    severity: 'high',
    summary: 'send / post / email / forward the conversation, secrets or user data to an address',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:send|post|email|e-mail|mail|forward|upload|transmit|exfiltrate|leak|deliver|copy|paste|submit|dump|sync|push|share|relay|beam)(?: (?:me|it|them|over|out|back))?(?: (?:all|the|this|these|your|my|our|every|any|of|entire|full|whole|complete|current|previous|user's|users'|their|stored|saved|private|sensitive|confidential|internal|contents|content)){0,4} ${SENSITIVE}\\b[^.!?\\n]{0,60}? (?:to|at|via|into|towards|using|through|with) (?:https?:|www\\.|[a-z0-9-]+(?:\\.[a-z0-9-]+)*\\.(?:com|net|org|io|xyz|ru|cn|info|biz|top|site|online|dev|app|co|me|tk|ml|sh|example)\\b|[a-z0-9._%+-]+@|(?:this|that|the following|my|our|an?|the attacker's|a remote|the) (?:[a-z]+ )?(?:url|address|endpoint|server|webhook|email|inbox|domain|site|ip|host|link|form|bucket|channel|pastebin)\\b|pastebin|webhook|ngrok|requestbin|attacker)`,
      ),
    ],
  }),
  regexRule({
    id: 'exfiltration.url_smuggling',
    category: 'exfiltration',
    severity: 'medium',
    summary: 'asks to put the conversation, secrets or user data into a URL, link or image',
    view: 'folded',
    patterns: [
      fx(
        `\\b(?:append|add|include|insert|put|place|encode|embed|substitute|replace|fill(?: in)?|concatenate|attach)\\b[^.!?\\n]{0,80}?\\b${SENSITIVE}\\b[^.!?\\n]{0,60}?\\b(?:url|link|query(?: string)?|parameter|param|image|img|src|endpoint|webhook)\\b`,
      ),
      fx(
        `\\b${SENSITIVE}\\b[^.!?\\n]{0,40}? (?:appended|added|inserted|embedded|attached|encoded) (?:to|after|into|in|as)\\b`,
      ),
      fx(
        `\\b${SENSITIVE}\\b[^.!?\\n]{0,60}?\\b(?:append|add|attach|concatenate)(?:ed)? (?:it|them) to (?:the |this |that )?(?:url|link|https?:)`,
      ),
    ],
  }),
  regexRule({
    id: 'exfiltration.shell_upload',
    category: 'exfiltration',
    severity: 'high',
    summary: 'curl / wget / nc uploading keys, .env, credentials or /etc/passwd',
    view: 'raw',
    patterns: [
      /\b(?:curl|wget|Invoke-WebRequest|iwr|Invoke-RestMethod)\b[^\n]{0,200}?(?:\s-d|--data(?:-binary|-raw|-urlencode)?|\s-F|--form|\s-T|--upload-file|--post-file|--post-data|-Body|-InFile)[\s=]{0,3}["']?@?[^\n]{0,40}?(?:\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.env\b|\/etc\/(?:passwd|shadow)|\$\(\s{0,3}(?:cat|printenv|env)\b|\$\{?[A-Z_]{0,30}(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)\b)/gi,
      /\b(?:cat|type|Get-Content)\s{1,4}[^\n|]{0,100}?(?:\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.env\b|\/etc\/(?:passwd|shadow))[^\n|]{0,100}\|\s{0,4}(?:curl|wget|nc|ncat|netcat)\b/gi,
    ],
  }),
];

export const PHRASE_RULES: Rule[] = [...injection, ...jailbreak, ...exfiltration];
