// Types of table-ownership.cjs, for its unit spec (src/database/table-ownership.spec.ts).
import type { ESLint, Rule } from 'eslint';

declare const plugin: ESLint.Plugin & { rules: { 'writes-through-owner': Rule.RuleModule } };
export = plugin;
