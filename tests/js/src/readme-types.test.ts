// Every code block of the READMEs is accounted for: each TypeScript block
// names where it runs and type-checks with `strict` against the built
// package's typings (the Node entry's for `node` blocks, the web entry's for
// page and worker blocks); each shell block names only make targets and
// scripts that exist; each TOML block is what examples/rust-app/Cargo.toml
// (or, for profiles, the workspace's Cargo.toml) says, line for line. Running the blocks is readme-node.test.ts's and
// readme-browser.test.ts's job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { RUNTIMES, allBlocks, blocksFor, root, where, type Block } from './support/readme.js';

const blocks = allBlocks();

test('every README block says what it is; TypeScript blocks say where they run', () => {
  assert.ok(blocks.length >= 10, `${blocks.length} blocks`);
  for (const b of blocks) {
    assert.ok(['ts', 'tsx', 'sh', 'toml'].includes(b.lang), `${where(b)}: language "${b.lang}" (ts, tsx, sh or toml)`);
    if (b.lang === 'ts' || b.lang === 'tsx') {
      const runtimes = b.tags.filter((t) => (RUNTIMES as readonly string[]).includes(t));
      assert.equal(runtimes.length, 1, `${where(b)}: one of ${RUNTIMES.join(', ')} after the language, got "${b.tags.join(' ')}"`);
      const unknown = b.tags.filter((t) => t !== 'norun' && !(RUNTIMES as readonly string[]).includes(t));
      assert.deepEqual(unknown, [], `${where(b)}: unknown tags`);
    }
  }
});

/** Type-check blocks as modules of their own with the given settings; diagnostics as text. */
function typecheck(group: Block[], options: ts.CompilerOptions): string[] {
  // Inside this package, so `kubewasm`, `react` and `kubernetes-types` resolve from its node_modules.
  const dir = fileURLToPath(new URL('../.readme-typecheck/', import.meta.url));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const files = group.map((b, i) => {
      const f = `${dir}block-${i}.${b.lang}`;
      writeFileSync(f, b.code);
      return f;
    });
    const program = ts.createProgram(files, { strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: false, target: ts.ScriptTarget.ES2022, ...options });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const file = d.file?.fileName ?? '';
      const i = files.indexOf(file);
      const at = i >= 0 && d.start !== undefined ? `${where(group[i]!)} +${d.file!.getLineAndCharacterOfPosition(d.start).line + 1}` : file;
      return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('README blocks for Node type-check against the Node entry', () => {
  const group = blocksFor('node', true);
  assert.ok(group.length >= 2);
  const diags = typecheck(group, {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    // As the README says: DOM for the loader's WebAssembly and fetch types.
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.esnext.disposable.d.ts'], types: ['node'],
  });
  assert.deepEqual(diags, []);
});

test('README blocks for pages and bundlers type-check against the web entry', () => {
  const group = blocksFor('browser', true);
  assert.ok(group.length >= 2);
  const diags = typecheck(group, {
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, jsx: ts.JsxEmit.ReactJSX,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.esnext.disposable.d.ts'], types: [],
  });
  assert.deepEqual(diags, []);
});

test('README blocks for Web Workers type-check against the web entry in a worker scope', () => {
  const group = blocksFor('worker', true);
  assert.ok(group.length >= 1);
  const diags = typecheck(group, {
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.webworker.d.ts', 'lib.esnext.disposable.d.ts'], types: [],
  });
  assert.deepEqual(diags, []);
});

test('README shell blocks name only make targets and scripts that exist', () => {
  const makefile = readFileSync(`${root}Makefile`, 'utf8');
  const targets = new Set([...makefile.matchAll(/^([a-z][\w-]*(?: [a-z][\w-]*)*):/gm)].flatMap((m) => m[1]!.split(' ')));
  const shell = blocks.filter((b) => b.lang === 'sh');
  assert.ok(shell.length >= 4);
  for (const b of shell) {
    const code = b.code.replace(/#.*$/gm, '');
    for (const m of code.matchAll(/\bmake ((?:[a-z][\w-]* ?)+)/g)) {
      for (const t of m[1]!.trim().split(' ')) assert.ok(targets.has(t), `${where(b)}: make ${t} is not a target`);
    }
    const base = b.file.includes('/') ? `${root}${b.file.slice(0, b.file.lastIndexOf('/') + 1)}` : root;
    for (const m of code.matchAll(/(?:^|\s)((?:\.\.\/)*scripts\/[\w./-]+)/g)) {
      assert.ok(existsSync(base + m[1]) || existsSync(root + m[1]), `${where(b)}: ${m[1]} does not exist`);
    }
  }
});

/** The `key = value` lines of each `[section]` of a TOML file (comments and blank lines dropped). */
function tomlSections(text: string): Map<string, Set<string>> {
  const sections = new Map<string, Set<string>>();
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (!line || line.startsWith('#')) continue;
    if (/^\[.*\]$/.test(line)) current = line;
    else {
      if (!sections.has(current)) sections.set(current, new Set());
      sections.get(current)!.add(line);
    }
  }
  return sections;
}

test('README TOML blocks are what the Rust example crate and the workspace really use', () => {
  const example = tomlSections(readFileSync(`${root}examples/rust-app/Cargo.toml`, 'utf8'));
  const workspace = tomlSections(readFileSync(`${root}Cargo.toml`, 'utf8'));
  const toml = blocks.filter((b) => b.lang === 'toml');
  assert.ok(toml.length >= 1);
  for (const b of toml) {
    for (const [section, lines] of tomlSections(b.code)) {
      const real = section.startsWith('[profile.') ? workspace.get(section) : example.get(section);
      assert.ok(real, `${where(b)}: ${section} is not in the ${section.startsWith('[profile.') ? 'workspace' : 'example'}'s Cargo.toml`);
      for (const l of lines) assert.ok(real.has(l), `${where(b)}: ${section} ${l} differs from the Cargo.toml`);
    }
  }
});
