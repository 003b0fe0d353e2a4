/**
 * Evaluates the shield's rules on the labelled set: a message counts as detected when its verdict
 * is not `allow`. Prints the confusion matrix, precision, recall and recall per category.
 *
 *   npm run shield:eval -- [--errors]    (--errors also lists every miss and false alarm)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectMessage, type Inspection } from '../src/shield/inspect';

export interface LabelledMessage {
  text: string;
  label: 'malicious' | 'benign';
  category: string;
  source: string;
}

export interface Evaluation {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  perCategory: Map<string, { detected: number; total: number }>;
  errors: { item: LabelledMessage; inspection: Inspection }[];
}

export const LABELLED_PATH = join(__dirname, '..', 'test', 'fixtures', 'shield', 'labelled.jsonl');

export function loadLabelled(path = LABELLED_PATH): LabelledMessage[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LabelledMessage);
}

export function evaluate(items: LabelledMessage[]): Evaluation {
  const e: Evaluation = {
    tp: 0,
    fp: 0,
    fn: 0,
    tn: 0,
    precision: 0,
    recall: 0,
    perCategory: new Map(),
    errors: [],
  };
  for (const item of items) {
    const inspection = inspectMessage(item.text);
    const detected = inspection.verdict !== 'allow';
    const malicious = item.label === 'malicious';
    if (malicious) {
      const c = e.perCategory.get(item.category) ?? { detected: 0, total: 0 };
      c.total++;
      if (detected) c.detected++;
      e.perCategory.set(item.category, c);
    }
    if (detected && malicious) e.tp++;
    else if (detected) e.fp++;
    else if (malicious) e.fn++;
    else e.tn++;
    if (detected !== malicious) e.errors.push({ item, inspection });
  }
  e.precision = e.tp / Math.max(1, e.tp + e.fp);
  e.recall = e.tp / Math.max(1, e.tp + e.fn);
  return e;
}

function main(): void {
  const items = loadLabelled();
  const e = evaluate(items);
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const pad = (s: string | number, n: number) => String(s).padStart(n);
  console.log(
    `labelled set: ${items.length} messages (${e.tp + e.fn} malicious, ${e.fp + e.tn} benign)`,
  );
  console.log('detected = verdict flag or block\n');
  console.log(`${''.padEnd(18)}${pad('detected', 10)}${pad('allowed', 10)}`);
  console.log(`${'malicious'.padEnd(18)}${pad(e.tp, 10)}${pad(e.fn, 10)}`);
  console.log(`${'benign'.padEnd(18)}${pad(e.fp, 10)}${pad(e.tn, 10)}\n`);
  console.log(`precision ${pct(e.precision)}   recall ${pct(e.recall)}\n`);
  const held = evaluate(items.filter((i) => i.source.includes('held-out')));
  if (held.tp + held.fp + held.fn + held.tn > 0) {
    console.log(
      `held-out subset (${held.tp + held.fn} malicious, ${held.fp + held.tn} benign, written after the rules were frozen):` +
        ` tp ${held.tp} fn ${held.fn} fp ${held.fp} tn ${held.tn}, precision ${pct(held.precision)}, recall ${pct(held.recall)}\n`,
    );
  }
  console.log('recall per category');
  for (const [category, c] of [...e.perCategory].sort()) {
    console.log(
      `  ${category.padEnd(18)}${pad(`${c.detected}/${c.total}`, 8)}${pad(pct(c.detected / c.total), 9)}`,
    );
  }
  if (process.argv.includes('--errors')) {
    console.log('\nerrors');
    for (const { item, inspection } of e.errors) {
      const rules = inspection.findings.map((f) => `${f.rule}:${f.severity}`).join(', ') || '-';
      console.log(
        `  [${item.label} → ${inspection.verdict} ${inspection.score}] ${JSON.stringify(item.text.slice(0, 110))}\n      ${rules}`,
      );
    }
  }
}

if (require.main === module) main();
