/**
 * The worked example of docs/catalog.md, checked against the code: its YAML is loaded with the real
 * loader, and its two JSON blocks are the row without consent and part of the row with community
 * supply.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load.ts';
import { CONSENT, rowOf } from './builders.ts';

const markdown = readFileSync(new URL('../../docs/catalog.md', import.meta.url), 'utf8');
const example = markdown.slice(markdown.indexOf('## Worked example'));
const blocks = [...example.matchAll(/```(yaml|json)\n([\s\S]*?)```/g)].map(([, language, body]) => ({ language, body }));

test('docs/catalog.md worked example matches the derived rows', () => {
  assert.deepEqual(
    blocks.map((block) => block.language),
    ['yaml', 'json', 'json'],
  );
  const catalog = buildCatalog(parseConfig(blocks[0].body));
  const withoutConsent = JSON.parse(blocks[1].body);
  assert.deepEqual(JSON.parse(JSON.stringify(rowOf(catalog, 'gateway/nova-2-5', CONSENT.none))), withoutConsent);
  const communityPart = JSON.parse(blocks[2].body) as Record<string, unknown>;
  const communityRow = rowOf(catalog, 'nova-2.5', CONSENT.community) as Record<string, unknown>;
  for (const [field, value] of Object.entries(communityPart)) assert.deepEqual(communityRow[field], value, field);
});
