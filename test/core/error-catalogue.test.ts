/**
 * docs/errors.md and the catalogue of src/core/errors.ts say the same thing: the same codes with the
 * same statuses, the same status → type mapping, and no error built outside the catalogue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_STATUSES, ERROR_STATUSES, errorTypeForStatus, errors, GatewayError } from '../../src/core/errors.ts';

const markdown = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

/** The body rows of the first table under `heading`, as cells without their padding. */
function tableRows(document: string, heading: string): string[][] {
  const start = document.indexOf(`\n${heading}\n`);
  assert.notEqual(start, -1, `no section '${heading}'`);
  const lines = document.slice(start + heading.length + 2).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const table = lines.slice(first, first + lines.slice(first).findIndex((line) => !line.startsWith('|')));
  // The header row and the |---| row are not data.
  return table.slice(2).map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );
}

const byNumber = (a: number, b: number) => a - b;

/** The three-digit numbers in a cell: "400 or 502" → [400, 502]. */
const statusesIn = (cell: string): number[] => [...cell.matchAll(/\b[1-5]\d\d\b/g)].map(([status]) => Number(status)).sort(byNumber);

/** `code` in backquotes → code. */
const unquoted = (cell: string): string => cell.replace(/^`|`$/g, '');

/** The codes table: code → statuses. */
function documentedCodes(document: string): Map<string, number[]> {
  const codes = new Map<string, number[]>();
  for (const [code, status] of tableRows(document, '## Codes')) {
    assert.ok(!codes.has(unquoted(code)), `${code} is listed twice`);
    codes.set(unquoted(code), statusesIn(status));
  }
  return codes;
}

/** The status → type table: status → type. */
function documentedTypes(document: string): Map<number, string> {
  const types = new Map<number, string>();
  for (const [statuses, type] of tableRows(document, '## Status → `error.type`')) {
    for (const status of statusesIn(statuses)) types.set(status, unquoted(type));
  }
  return types;
}

const catalogueCodes = () => new Map(Object.entries(CODE_STATUSES).map(([code, statuses]): [string, number[]] => [code, [...statuses].sort(byNumber)]));

/** Where the doc and the catalogue differ, in words; empty when they agree. */
function codeDrift(document: string): string[] {
  const documented = documentedCodes(document);
  const catalogue = catalogueCodes();
  const drift: string[] = [];
  for (const [code, statuses] of catalogue) {
    const written = documented.get(code);
    if (written === undefined) drift.push(`${code} is in the catalogue but not in docs/errors.md`);
    else if (written.join() !== statuses.join()) drift.push(`${code}: docs/errors.md says ${written.join(', ')}, the catalogue ${statuses.join(', ')}`);
  }
  for (const code of documented.keys()) {
    if (!catalogue.has(code)) drift.push(`${code} is in docs/errors.md but not in the catalogue`);
  }
  return drift;
}

test('docs/errors.md lists every code of the catalogue with the same statuses, and no other', () => {
  assert.deepEqual(codeDrift(markdown), []);
});

test('the comparison notices a missing code, an extra code and a different status', () => {
  const rowOf = (code: string) => markdown.split('\n').find((line) => line.startsWith(`| \`${code}\` |`))!;
  const withoutRow = markdown.replace(`${rowOf('invalid_state')}\n`, '');
  assert.deepEqual(codeDrift(withoutRow), ['invalid_state is in the catalogue but not in docs/errors.md']);
  const withExtra = markdown.replace(rowOf('invalid_state'), `${rowOf('invalid_state')}\n| \`gone\` | 410 | Never. |`);
  assert.deepEqual(codeDrift(withExtra), ['gone is in docs/errors.md but not in the catalogue']);
  const otherStatus = markdown.replace(rowOf('upstream_error'), rowOf('upstream_error').replace('400 or 502', '502'));
  assert.deepEqual(codeDrift(otherStatus), ['upstream_error: docs/errors.md says 502, the catalogue 400, 502']);
});

test('docs/errors.md maps every status the gateway answers with to the type the code derives', () => {
  const documented = documentedTypes(markdown);
  assert.deepEqual([...documented.keys()].sort(byNumber), [...ERROR_STATUSES].sort(byNumber));
  for (const status of ERROR_STATUSES) assert.equal(errorTypeForStatus(status), documented.get(status), `status ${status}`);
});

test('every status a code may take is one the gateway answers with', () => {
  const answered = new Set<number>(ERROR_STATUSES);
  for (const [code, statuses] of Object.entries(CODE_STATUSES)) {
    for (const status of statuses) assert.ok(answered.has(status), `${code}: ${status}`);
  }
});

test('a constructor fixes code, status, type and wording; the wording takes its typed parts', () => {
  const error = errors.modelNotFound('gateway/none');
  assert.ok(error instanceof GatewayError);
  assert.deepEqual(error.toEnvelope(), {
    error: {
      message: "The model 'gateway/none' does not exist or you do not have access to it.",
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    },
  });
  // One code, two statuses: each constructor takes the one its case calls for.
  assert.equal(errors.upstreamRejected('bad', null, false).status, 400);
  assert.equal(errors.upstreamStatus(500, 'boom', true).status, 502);
  assert.equal(errors.upstreamStatus(500, 'boom', true).message, 'The upstream provider returned status 500: boom');
  assert.equal(errors.missingParameter('account_id', 'organization_id').message, "Missing required parameter: 'account_id' (or 'organization_id').");
});

test('no module under src/ builds a GatewayError but the catalogue', () => {
  const source = fileURLToPath(new URL('../../src/', import.meta.url));
  const catalogue = join(source, 'core', 'errors.ts');
  const offenders = (readdirSync(source, { recursive: true }) as string[])
    .map((path) => join(source, path))
    .filter((path) => path.endsWith('.ts') && path !== catalogue && readFileSync(path, 'utf8').includes('new GatewayError('));
  assert.deepEqual(offenders, []);
});
