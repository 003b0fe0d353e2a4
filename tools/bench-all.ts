/**
 * `npm run bench:all`: runs every benchmark script of package.json (`bench`, `bench:*`) one after
 * another with its defaults, each against its own baseline in the same run, and rewrites the
 * "Latest full run" section of docs/benchmarks.md with their tables, the date, the machine and the commit.
 * A benchmark that fails is reported in that section rather than stopping the others; the section
 * is rewritten after each one, so an interrupted run keeps what it measured.
 *
 *   npm run bench:all [-- --only bench:database,bench:shield]
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';

const START = '<!-- bench:all start -->';
const END = '<!-- bench:all end -->';
const PAGE = 'docs/benchmarks.md';

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const scripts = Object.keys(
  (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts,
)
  .filter((name) => /^bench(:|$)/.test(name) && name !== 'bench:all')
  .filter((name) => !values.only || values.only.split(',').includes(name));

/**
 * Runs one benchmark, echoing its output as it comes, and returns the Markdown tables it printed
 * with their captions (`> ` lines: what was compared, the rounds, the load average).
 */
function run(script: string): Promise<{ tables: string; ok: boolean; seconds: number }> {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn('npm', ['run', '--silent', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on('close', (code) => {
      const tables = out
        .split('\n')
        .filter(
          (line, i, lines) =>
            /^[|>]/.test(line) || (line === '' && /^[|>]/.test(lines[i - 1] ?? '')),
        )
        .join('\n')
        .trim();
      done({ tables, ok: code === 0, seconds: Math.round((Date.now() - started) / 1000) });
    });
  });
}

/** Rewrites the section with what has run so far, so an interrupted run still leaves its figures. */
function writeSection(parts: string[], left: string[]): void {
  const page = readFileSync(PAGE, 'utf8');
  const from = page.indexOf(START);
  const to = page.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${PAGE} has no ${START} … ${END} section`);
  const pending = left.length ? [`(not run yet: ${left.map((s) => `\`${s}\``).join(', ')})`] : [];
  const section = `${START}\n\n${[...parts, ...pending].join('\n\n')}\n\n`;
  writeFileSync(PAGE, page.slice(0, from) + section + page.slice(to));
  // The tables as the benchmarks print them are not column-aligned; `npm test` checks formatting.
  execFileSync('npx', ['prettier', '--write', PAGE], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const parts = [
    `Run on ${new Date().toISOString().slice(0, 10)}, ${machine}, commit \`${commit}\`, by \`npm run bench:all\`.`,
  ];
  for (const [i, script] of scripts.entries()) {
    console.log(`\n[bench:all] ${i + 1}/${scripts.length}: npm run ${script}`);
    const result = await run(script);
    console.log(`[bench:all] ${script} ${result.ok ? 'done' : 'FAILED'} in ${result.seconds} s`);
    parts.push(`#### \`npm run ${script}\` (${result.seconds} s)`);
    parts.push(result.ok ? result.tables || '(no table printed)' : '**failed**: see its output');
    writeSection(parts, scripts.slice(i + 1));
  }
  console.log(`\n[bench:all] ${PAGE} updated`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
