import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import tableOwnership from './eslint-rules/table-ownership.cjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '*.js', '*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // The domain is pure TypeScript: no framework, ORM, validation or queue imports (style.md).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@nestjs/*', 'typeorm', 'typeorm/*', 'class-validator', 'class-transformer', 'bull', 'ioredis', 'pg', 'express'] },
      ],
    },
  },
  {
    // Money is converted in domain/money.ts only.
    files: ['src/**/*.ts'],
    ignores: ['src/domain/money.ts', 'src/**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "CallExpression[callee.name='parseFloat']", message: 'Convert money in src/domain/money.ts only.' },
        { selector: "CallExpression[callee.property.name='toFixed']", message: 'Convert money in src/domain/money.ts only.' },
      ],
    },
  },
  {
    // A table is written only by its owning module's repository: the map is eslint-rules/table-owners.json.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    plugins: { 'table-ownership': tableOwnership },
    rules: { 'table-ownership/writes-through-owner': 'error' },
  },
  {
    files: ['src/main.ts', 'src/cli.ts', 'src/ledger/ledger-verify.ts', 'test/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
