/**
 * Every reference in the repo points at something a reader of the repo can open: a file of the
 * repo, a heading of one of its Markdown pages, or a public URL. Notes kept beside the repo are
 * never cited, and a path named in a comment or a doc exists. Read from the text of every file
 * under src/, test/, bench/, bin/, docs/ and .ci/, and README.md.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['src', 'test', 'bench', 'bin', 'docs', '.ci', 'README.md'];

/**
 * Folders the docs describe before they exist (docs/architecture.md's folder layout). Each leaves
 * this list when it appears, which the tests below enforce.
 */
const ANNOUNCED = new Set<string>();

interface TextFile {
  /** Relative to the repo root, with forward slashes. */
  readonly path: string;
  readonly text: string;
}

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => filesUnder(join(path, entry.name)));
}

function repoFiles(): TextFile[] {
  return SCANNED.flatMap((top) => filesUnder(join(ROOT, top)))
    .map((absolute) => ({ path: relative(ROOT, absolute).split('\\').join('/'), text: readFileSync(absolute, 'utf8') }))
    .filter((file) => !file.text.includes('\0'));
}

type TokenKind = 'comment' | 'string';

interface Token {
  readonly kind: TokenKind;
  readonly start: number;
  readonly end: number;
}

/** Where a `/` in code starts a regular expression rather than a division. */
const BEFORE_REGEX = /(?:^|[(,=:[!&|?{};+\-*%<>~^]|\b(?:return|typeof|case|of|in|void|yield|await))\s*$/;

/**
 * The comments and string literals (template text included) of JavaScript or TypeScript source.
 * Regular expression literals are skipped, so that quotes inside them start no string.
 */
function tokens(text: string): Token[] {
  const found: Token[] = [];
  const templateResumesAt: number[] = []; // brace depths at which a `${…}` returns to its template
  let depth = 0;
  let i = 0;
  // Scans template text from `from` to its closing backtick or the next `${`; returns where code resumes.
  const template = (from: number): number => {
    let j = from;
    while (j < text.length && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) j += text[j] === '\\' ? 2 : 1;
    found.push({ kind: 'string', start: from, end: j });
    if (text[j] !== '$') return j + 1;
    templateResumesAt.push(depth);
    depth += 1;
    return j + 2;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      found.push({ kind: 'comment', start: i, end: stop });
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      found.push({ kind: 'comment', start: i, end: stop });
      i = stop;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      found.push({ kind: 'string', start: i + 1, end: j });
      i = j + 1;
    } else if (c === '`') {
      i = template(i + 1);
    } else if (c === '/' && BEFORE_REGEX.test(text.slice(Math.max(0, i - 12), i))) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j += text[j] === '\\' ? 2 : 1;
      }
      i = j + 1;
    } else if (c === '}' && templateResumesAt.at(-1) === depth - 1) {
      templateResumesAt.pop();
      depth -= 1;
      i = template(i + 1);
    } else {
      if (c === '{') depth += 1;
      else if (c === '}') depth -= 1;
      i += 1;
    }
  }
  return found;
}

/**
 * The text a reference check reads: for source code, only the chosen kinds of tokens (everything
 * else blanked, lines kept, so that positions still hold); for any other file, all of it.
 */
function readable(file: TextFile, kinds: readonly TokenKind[]): string {
  if (!/\.(ts|js)$/.test(file.path)) return file.text;
  const kept = file.text.replace(/[^\n]/g, ' ').split('');
  for (const token of tokens(file.text)) {
    if (!kinds.includes(token.kind)) continue;
    for (let i = token.start; i < token.end; i += 1) kept[i] = file.text[i];
  }
  return kept.join('');
}

/** `path:line: the line` for a match at `index` of the file's text. */
function located(file: TextFile, index: number): string {
  const line = file.text.slice(0, index).split('\n').length;
  return `${file.path}:${line}: ${file.text.split('\n')[line - 1].trim()}`;
}

// Built from pieces so that this file does not cite what it forbids.
const OUTSIDE_PATTERNS: readonly RegExp[] = [
  ...['PROTOCOLS', 'DESIGN', 'STYLE', 'gateway-api'].map((name) => new RegExp(`${name}\\.md`, 'g')),
  new RegExp(['DESIGN', ':'].join(''), 'g'),
  new RegExp(['\\(', 'spec', ':'].join(''), 'gi'),
  // A folder named shared at the start of a path, bare or absolute: notes beside the repo.
  new RegExp(['(?<![\\w.-])', '(?:/[\\w.-]+)*', '/?', 'shared', '/'].join(''), 'g'),
];

/** Mentions of documents kept outside the repo, in prose, comments and strings (never code). */
function outsideReferences(file: TextFile): string[] {
  const text = readable(file, ['comment', 'string']);
  return OUTSIDE_PATTERNS.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => located(file, match.index)));
}

/** A path from the repo root named in prose or a comment; a trailing `*` makes it a prefix. */
const NAMED_PATH = /(?<![\w./@-])((?:docs|src|test|bench|bin)\/[\w./-]*[\w/])(\*?)/g;

/** Paths the repo ignores (.gitignore): generated output, named but never committed. */
const IGNORED = readFileSync(join(ROOT, '.gitignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

function ignored(path: string): boolean {
  return IGNORED.some((pattern) => {
    if (pattern.startsWith('*')) return path.endsWith(pattern.slice(1));
    const anchored = pattern.replace(/^\//, '');
    return anchored.endsWith('/') ? `${path}/`.startsWith(anchored) : path === anchored;
  });
}

/** Whether `path` (from the repo root) exists; as a glob, whether some entry starts with it. */
function existsInRepo(path: string, glob: boolean): boolean {
  if (!glob) return existsSync(join(ROOT, path));
  const directory = join(ROOT, dirname(path));
  const prefix = path.slice(path.lastIndexOf('/') + 1);
  return existsSync(directory) && readdirSync(directory).some((entry) => entry.startsWith(prefix));
}

/** Repo paths named in a file's prose or comments that do not exist. */
function missingNamedPaths(file: TextFile): string[] {
  return [...readable(file, ['comment']).matchAll(NAMED_PATH)]
    .filter((match) => !ANNOUNCED.has(match[1]) && !ignored(match[1]) && !existsInRepo(match[1], match[2] === '*'))
    .map((match) => located(file, match.index));
}

const MARKDOWN_LINK = /\]\(([^()\s]+)(?:\s+"[^"]*")?\)/g;

/** GitHub's id for a heading: lower case, punctuation dropped, each space a hyphen. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...withoutCode.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => headingAnchor(match[1])));
}

/** Relative Markdown links whose file, or whose heading in a Markdown page, does not exist. */
function brokenMarkdownLinks(file: TextFile, read = (path: string) => readFileSync(path, 'utf8')): string[] {
  const broken: string[] = [];
  for (const match of file.text.matchAll(MARKDOWN_LINK)) {
    const target = match[1];
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto: and other absolute URLs
    const [path, anchor] = target.split('#', 2);
    const absolute = path === '' ? undefined : resolve(ROOT, dirname(file.path), path);
    const exists = absolute === undefined || (absolute.startsWith(ROOT) && existsSync(absolute));
    const page = absolute === undefined ? file.text : exists && absolute.endsWith('.md') ? read(absolute) : undefined;
    if (!exists || (anchor !== undefined && page !== undefined && !anchorsOf(page).has(anchor))) broken.push(located(file, match.index));
  }
  return broken;
}

describe('references stay inside the repo', () => {
  const files = repoFiles();

  test('the scan reads every place it is meant to', () => {
    for (const top of SCANNED)
      assert.ok(
        files.some((file) => file.path === top || file.path.startsWith(`${top}/`)),
        top,
      );
  });

  test('no file cites a document kept outside the repo', () => {
    assert.deepEqual(files.flatMap(outsideReferences), []);
  });

  test('every docs/, src/, test/, bench/ and bin/ path named in a comment or a doc exists', () => {
    assert.deepEqual(files.flatMap(missingNamedPaths), []);
  });

  test('a folder announced before it exists leaves the list once it does', () => {
    assert.deepEqual(
      [...ANNOUNCED].filter((path) => existsInRepo(path, false)),
      [],
    );
  });

  test('every relative Markdown link leads to a file of the repo, and to a heading of it', () => {
    assert.deepEqual(
      files.filter((file) => file.path.endsWith('.md')).flatMap((file) => brokenMarkdownLinks(file)),
      [],
    );
  });
});

describe('the reference checks catch what they are for', () => {
  const file = (path: string, text: string): TextFile => ({ path, text });

  test('comments and strings are told from code', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the tokenizer under test must skip a template literal inside a string.
    const source = "const a = /['\"]/; // one\nconst b = `x ${ { c: '}' }.c } y`; /* two */ const d = 1 / 2; // 'three'\n";
    const kinds = tokens(source).map((token) => `${token.kind}:${source.slice(token.start, token.end)}`);
    assert.deepEqual(kinds, ['comment:// one', 'string:x ', 'string:}', 'string: y', 'comment:/* two */', "comment:// 'three'"]);
  });

  test('outside documents, in any of their spellings, but not code', () => {
    const cited = [
      ['see ', 'PROTOCOLS', '.md §9.7'],
      ['(', 'DESIGN', ': fallbacks)'],
      ['the bars of ', 'STYLE', '.md'],
      ['(', 'spec', ': Model rules 1–2)'],
      ['read ../', 'shared', '/notes.txt'],
      ['`', 'shared', '/spec/x.md`'],
    ].map((pieces) => pieces.join(''));
    for (const text of cited) {
      assert.equal(outsideReferences(file('src/x.ts', `// ${text}\n`)).length, 1, text);
      assert.equal(outsideReferences(file('test/x.test.ts', `describe('${text}', () => {});\n`)).length, 1, text);
      assert.equal(outsideReferences(file('docs/x.md', `${text}\n`)).length, 1, text);
    }
    const code = ['constructor(', 'spec', ': ErrorSpec) {} // spec.strict, a shared pool, openai/resources/shared.d.ts\n'].join('');
    assert.deepEqual(outsideReferences(file('src/x.ts', code)), []);
  });

  test('a named path that is missing, with its line', () => {
    // The missing names are built from pieces, or the scan of this very file would find them.
    const missing = ['docs/', 'nowhere.md'].join('');
    const text = `/**\n * See docs/catalog.md and ${missing}, src/core/ and src/core/money.ts.\n */\nconst path = '${missing}';\n`;
    assert.deepEqual(missingNamedPaths(file('src/x.ts', text)), [`src/x.ts:2: * See docs/catalog.md and ${missing}, src/core/ and src/core/money.ts.`]);
    const globs = `// test/storage/contract* and ${['test/storage/', 'nothing*'].join('')}\n`;
    assert.equal(missingNamedPaths(file('src/x.ts', globs)).length, 1);
    const elsewhere = '// https://example.com/docs/x.md, @scope/src/y, bench/results/latest.json and src/jobs/\n';
    assert.deepEqual(missingNamedPaths(file('src/x.ts', elsewhere)), []);
  });

  test('a relative Markdown link to a missing file or heading', () => {
    const text =
      '# The catalog\n[a](billing.md) [b](nowhere.md) [c](billing.md#no-such-heading) [d](https://example.com/x) [e](#the-catalog) [f](#elsewhere)\n';
    const page = (path: string) => (path.endsWith('billing.md') ? '# Billing\n## Rates\n' : '');
    assert.equal(brokenMarkdownLinks(file('docs/x.md', text), page).length, 3);
    assert.equal(brokenMarkdownLinks(file('docs/x.md', '[a](billing.md#rates)\n'), page).length, 0);
    assert.equal(brokenMarkdownLinks(file('docs/x.md', '[up](../../outside.md)\n'), page).length, 1);
  });

  test('heading anchors follow GitHub', () => {
    assert.equal(headingAnchor('Streams that do not finish'), 'streams-that-do-not-finish');
    assert.equal(headingAnchor('Prompt caching (`gateway.cache`, `gateway.cache_ttl`)'), 'prompt-caching-gatewaycache-gatewaycache_ttl');
    assert.equal(headingAnchor('Status → `error.type`'), 'status--errortype');
  });
});
