import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderToStaticMarkup } from 'react-dom/server';
import { createElement } from 'react';
import { Markdown, safeHref } from '../src/markdown';

test('safeHref keeps only http(s) and mailto targets', () => {
  assert.equal(safeHref('https://example.com/a'), 'https://example.com/a');
  assert.equal(safeHref(' mailto:a@example.com '), 'mailto:a@example.com');
  for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,x', 'vbscript:x', '#/models', '/relative', '', null, undefined]) assert.equal(safeHref(bad), '', String(bad));
});

test('a hostile README renders to inert markup', () => {
  const md = [
    '# Title',
    '',
    '<script>alert(1)</script>',
    '',
    '<img src=x onerror="alert(1)">',
    '',
    '[x](javascript:alert(1)) and <a href="javascript:alert(1)" onclick="alert(1)">y</a>',
    '',
    '<div style="color:red" onmouseover="alert(1)">z</div>',
    '',
    '![img](https://example.com/i.png)',
    '',
    '| a | b |',
    '|---|---|',
    '| 1 | 2 |',
  ].join('\n');
  const html = renderToStaticMarkup(createElement(Markdown, { text: md, label: 'card' }));
  assert.match(html, /<h3>Title<\/h3>/);
  assert.match(html, /<table>/);
  for (const bad of [/<script/i, /<img/i, /\son\w+=/i, /javascript:/i, /style=/i, /<div/i]) assert.doesNotMatch(html, bad, `${bad} in ${html}`);
});
