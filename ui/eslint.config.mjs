// Lint of the console, its build script and the browser tests.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', fetch: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URLSearchParams: 'readonly', AbortController: 'readonly', URL: 'readonly', process: 'readonly', performance: 'readonly' },
    },
    rules: {
      // names and messages come from users and servers: render them as text, never as HTML
      'no-restricted-syntax': [
        'error',
        { selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']", message: 'render text, never HTML' },
        { selector: "AssignmentExpression[left.property.name=/^(innerHTML|outerHTML)$/]", message: 'render text, never HTML' },
        { selector: "CallExpression[callee.property.name='insertAdjacentHTML']", message: 'render text, never HTML' },
      ],
      'no-eval': 'error',
      'no-implied-eval': 'error',
    },
  },
);
