// The outline parser, natively: `node --test examples/md-outline-js/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { formatOutline, outline } from './outline.js';

const h = (level, text, line) => ({ level, text, line });

test('ATX headings, with closing sequences and up to three spaces of indent', () => {
  assert.deepEqual(outline('# One #\n  ## Two\n###   Three   ###\n#NoSpace\n####### seven\n    # code\n#\n'), [
    h(1, 'One', 1), h(2, 'Two', 2), h(3, 'Three', 3), h(1, '', 7),
  ]);
  assert.deepEqual(outline('## a ## b\n## c#'), [h(2, 'a ## b', 1), h(2, 'c#', 2)]);
});

test('setext headings take the whole paragraph and its first line', () => {
  assert.deepEqual(outline('Intro\nmore\n===\n\nSub\n---\n\n---\n- item\n---\n'), [
    h(1, 'Intro more', 1), h(2, 'Sub', 5),
  ]);
});

test('fenced code blocks are skipped, closed only by a matching fence', () => {
  const md = '```js\n# no\n~~~\n# still no\n```\n# yes\n~~~~\n# no\n~~~\n# no\n~~~~\n```\n# unclosed';
  assert.deepEqual(outline(md), [h(1, 'yes', 6)]);
  assert.deepEqual(outline('``` a ` b\n# inline code, not a fence\n'), [h(1, 'inline code, not a fence', 2)]);
});

test('front matter is skipped; CRLF counts lines right', () => {
  assert.deepEqual(outline('---\ntitle: x\n---\n# T\r\n\r\nA\r\n=\r\n'), [h(1, 'T', 4), h(1, 'A', 6)]);
});

test('the indented text form', () => {
  assert.equal(formatOutline([h(2, 'A', 1), h(3, 'B', 4), h(2, '', 9)]), 'A  (line 1)\n  B  (line 4)\n(empty heading)  (line 9)');
  assert.equal(formatOutline([]), '');
});
