// The heading outline of a Markdown text: ATX (`## Title`) and setext
// (`Title` underlined with `===` or `---`) headings, as CommonMark reads
// them, ignoring fenced code blocks (``` and ~~~), indented code, and YAML
// front matter. Pure JavaScript, no imports: tested under Node.js as is.

/** A fence opening: up to 3 spaces, then 3+ backticks or tildes. */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** An ATX heading: up to 3 spaces, 1-6 `#`, then a space/tab or the end. */
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
/** A setext underline: up to 3 spaces, `=`s or `-`s, trailing spaces. */
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
/** Lines that start something other than a paragraph. */
const NOT_PARAGRAPH = /^ {0,3}(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]|<|(?:[-*_][ \t]*){3,}$)/;

/**
 * The headings of `text`.
 * @param {string} text Markdown
 * @returns {Array<{level: number, text: string, line: number}>} line is 1-based
 */
export function outline(text) {
  const lines = text.split(/\r\n|\n|\r/);
  const headings = [];
  let fence; // the open fence's marker, e.g. "```"
  let paragraph = []; // [line number, text] of the open paragraph
  let start = 0;

  // YAML front matter: `---` on the first line, closed by `---` or `...`.
  if (lines[0] === '---') {
    const end = lines.findIndex((l, i) => i > 0 && (l === '---' || l === '...'));
    if (end > 0) start = end + 1;
  }

  for (let i = start; i < lines.length; i++) {
    const line = lines[i];
    const number = i + 1;
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length && close[2].trim() === '') {
        fence = undefined;
      }
      continue;
    }
    const open = FENCE.exec(line);
    if (open && !(open[1][0] === '`' && open[2].includes('`'))) {
      fence = open[1];
      paragraph = [];
      continue;
    }
    if (line.trim() === '') {
      paragraph = [];
      continue;
    }
    const underline = SETEXT.exec(line);
    if (underline && paragraph.length > 0) {
      headings.push({
        level: underline[1][0] === '=' ? 1 : 2,
        text: paragraph.map(([, t]) => t.trim()).join(' '),
        line: paragraph[0][0],
      });
      paragraph = [];
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      // A closing sequence of `#`s goes, if a space precedes it (or it is all there is).
      const content = (atx[2] ?? '').replace(/(^|[ \t]+)#+$/, '').trim();
      headings.push({ level: atx[1].length, text: content, line: number });
      paragraph = [];
      continue;
    }
    // Lists, quotes, HTML and rules end a paragraph; indented code cannot
    // start one (but an indented line continues one).
    if (NOT_PARAGRAPH.test(line)) {
      paragraph = [];
      continue;
    }
    if (paragraph.length === 0 && /^( {4}|\t)/.test(line)) continue;
    paragraph.push([number, line]);
  }
  return headings;
}

/**
 * The outline as indented text, one heading per line: two spaces per level
 * below the shallowest, then the text and its line number.
 */
export function formatOutline(headings) {
  if (headings.length === 0) return '';
  const top = Math.min(...headings.map((h) => h.level));
  return headings
    .map((h) => `${'  '.repeat(h.level - top)}${h.text || '(empty heading)'}  (line ${h.line})`)
    .join('\n');
}
