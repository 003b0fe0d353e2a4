// Builds the browser assets: the web console (console/) into dist/console with esbuild (one
// bundle, one stylesheet, the page), and Redoc's standalone bundle, for /docs, into
// dist/reference (redoc is a development dependency: production carries this one file). Runs
// after `npm install` and before `npm run dev` / `npm test`; takes well under a second.
import { createRequire } from 'node:module';
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
await mkdir('dist/reference', { recursive: true });
await copyFile(
  createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'),
  'dist/reference/redoc.standalone.js',
);
console.log(`[console] built ${outdir} and dist/reference`);
