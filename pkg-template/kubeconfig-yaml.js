// The YAML that kubeconfig files are written in, parsed without a dependency.
// kubectl and the cloud CLIs write kubeconfigs in block style (go-yaml's
// output): mappings, sequences (indented or not under their key), plain
// scalars (long ones folded over several lines, as gcloud's `installHint`),
// quoted scalars, block scalars (`|`, `>`, with indentation and chomping
// indicators, as az's `installHint: |2`), `{}`/`[]`, comments; hand-written
// ones add one-line flow collections. That is what this reads. Anything else
// (anchors and aliases, tags, multi-line flow or quoted scalars, several
// documents) throws a SyntaxError naming the line, never a guess; JSON files
// are parsed as JSON.

class YamlError extends SyntaxError {}

const fail = (line, msg) => {
  throw new YamlError(`line ${line}: ${msg}`);
};

// Deeper nesting is refused: a kubeconfig is a few levels deep, and the
// reader recurses once per level.
const MAX_DEPTH = 1000;
const tooDeep = (line) => fail(line, `nesting deeper than ${MAX_DEPTH} levels`);

// A key written into a mapping as a plain own property (a key named
// __proto__ included); a key given twice is refused, as go-yaml does.
function setKey(out, key, value, lineNo) {
  if (Object.prototype.hasOwnProperty.call(out, key)) fail(lineNo, `duplicate key ${JSON.stringify(key)}`);
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

// Cut a comment (`#` at the start or after whitespace, outside quotes).
function stripComment(s, lineNo) {
  let quote = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = null;
    } else if (quote === "'") {
      if (c === "'") {
        if (s[i + 1] === "'") i++;
        else quote = null;
      }
    } else if (c === '#' && (i === 0 || s[i - 1] === ' ' || s[i - 1] === '\t')) {
      return s.slice(0, i).trimEnd();
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:-]/.test(s[i - 1]))) {
      quote = c;
    }
  }
  if (quote) fail(lineNo, 'unterminated quoted scalar (multi-line scalars are not supported)');
  return s.trimEnd();
}

const ESCAPES = { '0': '\0', a: '\x07', b: '\b', t: '\t', '\t': '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ', '"': '"', '/': '/', '\\': '\\', N: '\x85', _: '\xa0' };

// A quoted scalar starting at s[i]; returns [value, index after it].
function quoted(s, i, lineNo) {
  const q = s[i];
  let out = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j];
    if (q === "'") {
      if (c === "'") {
        if (s[j + 1] === "'") { out += "'"; j++; continue; }
        return [out, j + 1];
      }
      out += c;
    } else if (c === '"') {
      return [out, j + 1];
    } else if (c === '\\') {
      const e = s[++j];
      const hex = { x: 2, u: 4, U: 8 }[e];
      if (hex) {
        const h = s.slice(j + 1, j + 1 + hex);
        if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== hex) fail(lineNo, `bad escape \\${e}${h}`);
        const cp = parseInt(h, 16);
        if (cp > 0x10ffff) fail(lineNo, `bad escape \\${e}${h}: beyond U+10FFFF`);
        out += String.fromCodePoint(cp);
        j += hex;
      } else if (e in ESCAPES) {
        out += ESCAPES[e];
      } else {
        fail(lineNo, `bad escape \\${e ?? ''}`);
      }
    } else {
      out += c;
    }
  }
  return fail(lineNo, 'unterminated quoted scalar');
}

// A plain scalar stays a string (only `null`, `~` and nothing are null): Go
// decodes kubeconfig fields by their type, so `token: 0123` is the string
// "0123"; the loader reads booleans itself.
function plain(s, lineNo) {
  if (/^[&*!|>%@`]/.test(s)) fail(lineNo, `unsupported YAML (${s[0]}): anchors, aliases and tags are not read`);
  if (s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL') return null;
  return s;
}

// One-line flow collections: `[a, "b"]`, `{k: v}`, nested.
function flow(s, lineNo) {
  let i = 0;
  let depth = 0;
  const ws = () => { while (s[i] === ' ' || s[i] === '\t') i++; };
  const scalar = (stops) => {
    ws();
    if (s[i] === '"' || s[i] === "'") {
      const [v, j] = quoted(s, i, lineNo);
      i = j;
      return v;
    }
    const start = i;
    while (i < s.length && !stops.includes(s[i])) i++;
    return plain(s.slice(start, i).trim(), lineNo);
  };
  const value = () => {
    ws();
    if ((s[i] === '[' || s[i] === '{') && ++depth > MAX_DEPTH) tooDeep(lineNo);
    if (s[i] === '[') {
      i++;
      const out = [];
      ws();
      if (s[i] === ']') { i++; depth--; return out; }
      for (;;) {
        out.push(value());
        ws();
        if (s[i] === ',') { i++; ws(); if (s[i] === ']') { i++; depth--; return out; } continue; }
        if (s[i] === ']') { i++; depth--; return out; }
        fail(lineNo, 'unterminated flow sequence (multi-line flow is not supported)');
      }
    }
    if (s[i] === '{') {
      i++;
      const out = {};
      ws();
      if (s[i] === '}') { i++; depth--; return out; }
      for (;;) {
        const k = scalar([',', '}', ':']);
        ws();
        if (s[i] !== ':') fail(lineNo, 'expected `:` in a flow mapping');
        i++;
        setKey(out, String(k), value(), lineNo);
        ws();
        if (s[i] === ',') { i++; ws(); if (s[i] === '}') { i++; depth--; return out; } continue; }
        if (s[i] === '}') { i++; depth--; return out; }
        fail(lineNo, 'unterminated flow mapping (multi-line flow is not supported)');
      }
    }
    return scalar([',', ']', '}']);
  };
  const v = value();
  ws();
  if (i !== s.length) fail(lineNo, `unexpected ${JSON.stringify(s.slice(i))} after a flow collection`);
  return v;
}

// A block scalar's value stands in its line as BLOCK and an index (NUL is not
// allowed in YAML text, so no scalar can look like it).
const BLOCK = '\0';

// A block scalar (`|` literal or `>` folded) whose header `|2-` is at
// `lines[at]`, its key at column `indent`: the value and the index of the
// first line after it. Content lines are read raw (a `#` in them is text).
function blockScalar(header, lines, at, indent, lineNo) {
  const m = /^([|>])(?:([1-9])([+-]?)|([+-])([1-9]?))$/.exec(header) ?? /^([|>])()()()()$/.exec(header);
  if (!m) fail(lineNo, `bad block scalar header ${JSON.stringify(header)}`);
  const folded = m[1] === '>';
  const digit = m[2] || m[5];
  const chomp = m[3] || m[4] || '';
  let end = at + 1;
  let contentIndent = digit ? indent + Number(digit) : 0;
  const body = [];
  for (; end < lines.length; end++) {
    const raw = lines[end];
    const spaces = /^ */.exec(raw)[0].length;
    if (raw.trim() === '') {
      // Spaces beyond the content's indentation are text (a literal's " " line).
      body.push(contentIndent > 0 && spaces > contentIndent ? raw.slice(contentIndent) : '');
      continue;
    }
    if (contentIndent === 0) {
      if (spaces <= indent) break;
      contentIndent = spaces;
    }
    if (spaces < contentIndent) break;
    body.push(raw.slice(contentIndent));
  }
  // Trailing empty lines belong to the chomping, not the text.
  let kept = body.length;
  while (kept > 0 && body[kept - 1] === '') kept--;
  const trailing = body.length - kept;
  const text = body.slice(0, kept);
  let value = '';
  if (!folded) {
    value = text.join('\n');
  } else {
    // Folding: the break between two lines of text is a space, or as many
    // newlines as empty lines stand between them; around a more indented
    // line (one starting with a space) every break is kept.
    let empties = 0;
    let prev = null;
    for (const line of text) {
      if (line === '') {
        empties++;
        continue;
      }
      if (prev !== null) {
        const kept = /^[ \t]/.test(line) || /^[ \t]/.test(prev);
        value += kept ? '\n'.repeat(empties + 1) : empties > 0 ? '\n'.repeat(empties) : ' ';
      } else {
        value += '\n'.repeat(empties);
      }
      value += line;
      empties = 0;
      prev = line;
    }
  }
  if (text.length > 0 && chomp !== '-') value += '\n';
  if (chomp === '+') value += '\n'.repeat(trailing);
  return [value, end];
}

function inline(s, lineNo, blocks) {
  if (s[0] === BLOCK) return blocks[Number(s.slice(1))];
  if (s[0] === '[' || s[0] === '{') return flow(s, lineNo);
  if (s[0] === '"' || s[0] === "'") {
    const [v, j] = quoted(s, 0, lineNo);
    if (s.slice(j).trim() !== '') fail(lineNo, `unexpected ${JSON.stringify(s.slice(j))} after a quoted scalar`);
    return v;
  }
  return plain(s, lineNo);
}

// `key: rest` → [key, rest]; null when the line is not a mapping entry.
function splitKey(s, lineNo) {
  if (s[0] === '"' || s[0] === "'") {
    const [k, j] = quoted(s, 0, lineNo);
    const rest = s.slice(j);
    if (rest === ':' || rest.startsWith(': ') || rest.startsWith(':\t')) return [k, rest.slice(1).trim()];
    return null;
  }
  if (s.startsWith('? ')) fail(lineNo, 'complex mapping keys are not supported');
  if (s[0] === '{' || s[0] === '[') return null;
  const m = /:(\s|$)/.exec(s);
  if (!m) return null;
  return [s.slice(0, m.index).trim(), s.slice(m.index + 1).trim()];
}

// Where a block scalar's header (`|`, `>-`, `|2`, ...) stands on a line:
// alone, after `- ` (items nest), or after `key:`; and the column its
// indentation counts from (the key's, or the item's dash).
function blockHeader(content, indent, lineNo) {
  let rest = content;
  let column = indent;
  for (;;) {
    if (rest[0] === '|' || rest[0] === '>') return { at: content.length - rest.length, header: rest, column };
    if (rest === '-' || rest.startsWith('- ')) {
      const item = rest.slice(1).trimStart();
      const itemColumn = indent + content.length - item.length;
      rest = item;
      // A header right after the dash counts from the dash; a key's, from the key.
      if (rest[0] !== '|' && rest[0] !== '>') column = itemColumn;
      continue;
    }
    const kv = splitKey(rest, lineNo);
    if (kv && (kv[1][0] === '|' || kv[1][0] === '>')) return { at: content.length - kv[1].length, header: kv[1], column };
    return null;
  }
}

/** Parse a kubeconfig's YAML (or JSON) text. Throws a SyntaxError on anything outside the supported subset. */
export function parseKubeconfigYaml(text) {
  const src = text.replace(/^\uFEFF/, '');
  if (/^\s*\{/.test(src)) return JSON.parse(src);
  const lines = [];
  const blocks = [];
  let docs = 0;
  const raws = src.split(/\r?\n/);
  // The newline ending the last line starts no line of its own.
  if (raws.length > 1 && raws[raws.length - 1] === '') raws.pop();
  // Blank and comment lines dropped before the next kept line: a plain
  // scalar continued over them keeps a newline per blank line, and a comment
  // ends it.
  let blanks = 0;
  let comment = false;
  for (let n = 0; n < raws.length; n++) {
    const raw = raws[n];
    const lineNo = n + 1;
    const indentMatch = /^[ ]*/.exec(raw)[0].length;
    if (raw[indentMatch] === '\t') fail(lineNo, 'tabs are not allowed in indentation');
    let content = stripComment(raw.slice(indentMatch), lineNo);
    if (content === '') {
      if (raw.trim() === '') blanks++;
      else comment = true;
      continue;
    }
    if (indentMatch === 0 && (content === '---' || content.startsWith('--- '))) {
      if (++docs > 1 || lines.length > 0) fail(lineNo, 'only one YAML document is supported');
      if (content.slice(3).trim() !== '') fail(lineNo, 'content after `---` is not supported');
      continue;
    }
    if (indentMatch === 0 && (content === '...' || content.startsWith('%'))) fail(lineNo, 'YAML directives and document ends are not supported');
    const line = { indent: indentMatch, text: content, lineNo, blanks, comment };
    blanks = 0;
    comment = false;
    // `key: |2`, `- >-` or `- key: |`: the block scalar's lines are read here, raw.
    const block = blockHeader(content, indentMatch, lineNo);
    if (block) {
      const [value, next] = blockScalar(block.header, raws, n, block.column, lineNo);
      line.text = content.slice(0, block.at) + BLOCK + blocks.length;
      blocks.push(value);
      n = next - 1;
    }
    lines.push(line);
  }
  let pos = 0;

  // A plain scalar continued on more indented lines (go-yaml folds long
  // ones): the lines joined by spaces (a blank line between two is a
  // newline). A comment or a `key: value` line is not part of it.
  const continued = (text, indent, lineNo) => {
    if (/^["'[{\0]/.test(text)) return inline(text, lineNo, blocks);
    // As YAML: `a: b: c` is an error, not the string "b: c".
    if (/:(\s|$)/.test(text)) fail(lineNo, 'a plain value cannot hold `: ` (quote it)');
    let out = text;
    while (pos < lines.length && lines[pos].indent > indent) {
      const l = lines[pos];
      if (l.comment || l.text[0] === BLOCK || splitKey(l.text, l.lineNo)) break;
      out += l.blanks > 0 ? '\n'.repeat(l.blanks) : ' ';
      out += l.text;
      pos++;
    }
    return out === text ? inline(text, lineNo, blocks) : plain(out, lineNo);
  };

  const isItem = (l) => l.text === '-' || l.text.startsWith('- ');

  let depth = 0;
  function node(indent) {
    const l = lines[pos];
    if (++depth > MAX_DEPTH) tooDeep(l.lineNo);
    let v;
    if (isItem(l)) v = sequence(l.indent);
    else if (splitKey(l.text, l.lineNo)) v = mapping(l.indent);
    else {
      pos++;
      v = continued(l.text, indent, l.lineNo);
    }
    depth--;
    return v;
  }

  // The value of a `key:` or `-` with nothing after it: a nested node, or null.
  function child(parentIndent, allowSameIndentSeq) {
    const next = lines[pos];
    if (!next) return null;
    if (next.indent > parentIndent) return node(next.indent);
    if (allowSameIndentSeq && next.indent === parentIndent && isItem(next)) return sequence(parentIndent);
    return null;
  }

  function mapping(indent) {
    const out = {};
    while (pos < lines.length) {
      const l = lines[pos];
      if (l.indent < indent) break;
      if (l.indent > indent) fail(l.lineNo, 'unexpected indentation');
      if (isItem(l)) break;
      const kv = splitKey(l.text, l.lineNo);
      if (!kv) fail(l.lineNo, `expected \`key: value\`, got ${JSON.stringify(l.text)}`);
      const key = String(kv[0]);
      pos++;
      setKey(out, key, kv[1] === '' ? child(indent, true) : continued(kv[1], indent, l.lineNo), l.lineNo);
    }
    return out;
  }

  function sequence(indent) {
    const out = [];
    while (pos < lines.length) {
      const l = lines[pos];
      if (l.indent !== indent || !isItem(l)) {
        if (l.indent > indent) fail(l.lineNo, 'unexpected indentation');
        break;
      }
      const rest = l.text === '-' ? '' : l.text.slice(2).trimStart();
      if (rest === '') {
        pos++;
        out.push(child(indent, false));
      } else if (isItem({ text: rest }) || splitKey(rest, l.lineNo)) {
        // `- key: value` (or `- - x`): a node that starts on this line, at the column of `rest`.
        lines[pos] = { indent: indent + (l.text.length - rest.length), text: rest, lineNo: l.lineNo };
        out.push(node(lines[pos].indent));
      } else {
        pos++;
        out.push(continued(rest, indent, l.lineNo));
      }
    }
    return out;
  }

  if (lines.length === 0) return null;
  const v = node(lines[0].indent);
  if (pos < lines.length) fail(lines[pos].lineNo, 'unexpected content after the document');
  return v;
}
