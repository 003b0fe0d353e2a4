// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = (await import('node:module')).builtinModules;

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'packages/*/dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      '**/*.d.mts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: {
        module: 'writable',
        require: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
  },
  {
    // Receiver examples are what users copy: CommonJS with require(), as their READMEs show, and
    // a Fetch-API handler.
    files: ['packages/*/examples/**'],
    languageOptions: {
      globals: { Buffer: 'readonly', Response: 'readonly', TextDecoder: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Workflow code is replayed and must stay deterministic: no I/O, no Node, no app code.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins,
            ...nodeBuiltins.map((m) => `node:${m}`),
            'mongodb',
            'pino',
            'uuid',
          ],
          patterns: [
            { group: ['**/src', '**/src/**'], message: 'workflows must not import app code' },
            { group: ['**/activities', '**/activities/**'], allowTypeImports: true },
          ],
        },
      ],
    },
  },
  {
    // The console's bundle runs in the browser: it reads the server's view schemas as types only.
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/**', '**/workflows/**', '**/activities/**'],
              allowTypeImports: true,
              message: 'the console imports server modules as types only (import type)',
            },
          ],
        },
      ],
    },
  },
  {
    // Response bodies are `any` by nature in HTTP tests; the assertions check their shape.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
);
