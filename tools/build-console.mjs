// Builds the web console (console/) into dist/console with esbuild: one bundle, one stylesheet,
// the page. Runs after `npm install` and before `npm run dev` / `npm test`; takes well under a second.
import { copyFile, mkdir } from 'node:fs/promises';

const outdir = 'dist/console';
let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // A production install without dev dependencies ships the bundle `npm run build` made.
  console.log('[console] esbuild is not installed: skipping the console build');
  process.exit(0);
}
await mkdir(outdir, { recursive: true });
await esbuild.build({
  entryPoints: { app: 'console/src/main.tsx' },
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir,
  logLevel: 'warning',
});
await copyFile('console/index.html', `${outdir}/index.html`);
console.log(`[console] built ${outdir}`);
