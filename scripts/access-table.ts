// Writes the access table (src/shared/access.ts) into docs/security.md, between its markers.
// test/security/access-doc.test.ts fails when the doc and the table differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { ACCESS_TABLE_MARKERS, renderAccessTable } from '../src/shared/access.ts';

const file = new URL('../docs/security.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const [start, end] = ACCESS_TABLE_MARKERS;
const from = doc.indexOf(start);
const to = doc.indexOf(end);
if (from < 0 || to < from) throw new Error(`docs/security.md has no access-table markers (${start} … ${end})`);
writeFileSync(file, `${doc.slice(0, from + start.length)}\n\n${renderAccessTable()}\n\n${doc.slice(to)}`);
console.log('docs/security.md: access table written');
