// The code blocks of the repository's READMEs, keyed by their fence's info
// string: the language, then where the block runs (```ts node, ```ts browser,
// ```ts worker), and `norun` for a fragment that is type-checked for that
// runtime but not run (a controller that runs forever). The README tests run
// or check each block in its runtime, so a README cannot show code that
// nothing runs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root (tests/js/dist/support → ../../../..). */
export const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** Every README whose blocks are run or checked. */
export const READMES = ['README.md', 'pkg-template/README.md', 'examples/edge-worker/README.md', 'examples/rust-app/README.md', 'www/README.md'];

/** Where a TypeScript block runs (or, with `norun`, what it is type-checked for). */
export const RUNTIMES = ['node', 'browser', 'worker'] as const;
export type Runtime = (typeof RUNTIMES)[number];

export interface Block {
  /** README path relative to the root, and the 1-based line of the opening fence. */
  file: string;
  line: number;
  /** The nearest heading above the block. */
  heading: string;
  lang: string;
  tags: string[];
  code: string;
}

/** The fenced blocks of one README, in order. */
export function blocksOf(file: string): Block[] {
  const lines = readFileSync(root + file, 'utf8').split('\n');
  const out: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6} /.test(l)) heading = l.replace(/^#+ /, '');
    const open = /^```(\S*)\s*(.*)$/.exec(l);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j]!)) body.push(lines[j++]!);
    if (j >= lines.length) throw new Error(`${file}:${i + 1}: unclosed code fence`);
    out.push({ file, line: i + 1, heading, lang: open[1]!, tags: open[2]!.split(/\s+/).filter(Boolean), code: body.join('\n') + '\n' });
    i = j;
  }
  return out;
}

/** Every block of every README. */
export const allBlocks = (): Block[] => READMES.flatMap(blocksOf);

/** The TypeScript blocks for `runtime`, with or without the `norun` ones. */
export const blocksFor = (runtime: Runtime, withNorun = false): Block[] =>
  allBlocks().filter((b) => (b.lang === 'ts' || b.lang === 'tsx') && b.tags.includes(runtime) && (withNorun || !b.tags.includes('norun')));

/** `file:line (heading)`, to name a block in an assertion. */
export const where = (b: Block): string => `${b.file}:${b.line} (${b.heading})`;

/** The block as JavaScript (types erased), an ES module. */
export function toJs(b: Block): string {
  return ts.transpileModule(b.code, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, jsx: ts.JsxEmit.ReactJSX, verbatimModuleSyntax: false },
    fileName: `block.${b.lang}`,
  }).outputText;
}
