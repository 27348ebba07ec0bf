// docs/plugins.md is tested: every complete JSON plugin example in it is accepted by claim creation,
// and every error text it quotes for a plugin is one the plugin's source emits.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SignedIn } from '../helpers/signin.ts';
import { ROOT } from '../helpers/cli.ts';
import { manager, newClaimId, numUses } from '../claims/helpers.ts';

const doc = readFileSync(join(ROOT, 'docs', 'plugins.md'), 'utf8');
const examples = [...doc.matchAll(/```json\n(\{ "pluginId".*\})\n```/g)].map(
  (m) => JSON.parse(m[1]!) as { pluginId: string; instanceId: string },
);

describe('plugin reference (docs/plugins.md)', () => {
  let m: SignedIn;
  const t = useApp();
  before(async () => {
    m = await manager(t);
  });

  test('has an example for every core plugin, and each is accepted as written', async () => {
    // the eight core plugins of docs/plugins.md (hosted and social plugins have their own documents)
    const core = ['numUses', 'codes', 'password', 'transferTimes', 'initiatedBy', 'whitelist', 'halt', 'anonymous'];
    const ids = new Set(examples.map((e) => e.pluginId));
    assert.deepEqual([...ids].sort(), [...core].sort());
    for (const example of examples) {
      if (JSON.stringify(example).includes('<')) continue; // placeholders (a store id and secret)
      const plugins = example.pluginId === 'numUses' ? [example] : [numUses(1), example];
      const res = await t.request('POST', '/api/v0/claims', {
        token: m.accessToken,
        body: { claims: [{ claimId: newClaimId(), plugins }] },
      });
      assert.equal(res.statusCode, 200, `${JSON.stringify(example)}: ${res.body}`);
    }
  });

  test('every plugin error text it quotes is emitted by the source', () => {
    const sources =
      readdirSync(join(ROOT, 'src', 'plugins'))
        .map((f) => readFileSync(join(ROOT, 'src', 'plugins', f), 'utf8'))
        .join('\n') + readFileSync(join(ROOT, 'src', 'stores', 'claims-integration.ts'), 'utf8');
    const errorLines = doc.split('\n').filter((l) => /^- Errors?:/.test(l) || /^ {2}`/.test(l));
    const quoted = errorLines
      .flatMap((l) => [...l.matchAll(/`([^`]+)`/g)].map((q) => q[1]!))
      .filter((q) => /^[A-Z]/.test(q) && q.includes(' '));
    assert.ok(quoted.length >= 14, `found ${quoted.length} texts`);
    for (const text of quoted) assert.ok(sources.includes(text), `not in the source: ${text}`);
  });
});
