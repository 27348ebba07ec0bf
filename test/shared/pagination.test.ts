import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { paginate } from '../../src/shared/pagination.ts';

// A probe list route over api_keys, ordered newest first with ties broken by id.
describe('bookmark pagination', () => {
  const N = 60;
  const t = useApp({
    extend(app) {
      app.get(
        '/api/v0/probe/keys',
        {
          schema: {
            querystring: Type.Object({ bookmark: Type.Optional(Type.String()), label: Type.Optional(Type.String()) }),
          },
        },
        async (req) => {
          const q = req.query as { bookmark?: string; label?: string };
          let query = app.ctx.db.selectFrom('api_keys').select(['id', 'label', 'created_at']);
          if (q.label) query = query.where('label', '=', q.label);
          return paginate({
            query,
            keys: [
              { column: 'created_at', direction: 'desc' },
              { column: 'id', direction: 'asc' },
            ],
            bookmark: q.bookmark,
            keyring: app.ctx.keyring,
            scope: `probe:${q.label ?? ''}`,
          });
        },
      );
    },
  });
  before(async () => {
    // 60 keys, many sharing a timestamp, so the tie-breaker matters
    const rows = Array.from({ length: N }, (_, i) => ({
      id: `p_${String(i).padStart(3, '0')}`,
      label: i % 2 ? 'odd' : 'even',
      key_hash: `h${i}`,
      created_at: 1000 + Math.floor(i / 7),
      revoked_at: null,
    }));
    await t.ctx.db.insertInto('api_keys').values(rows).execute();
  });

  async function all(label?: string) {
    const seen: string[] = [];
    const pages: number[] = [];
    let bookmark = '';
    for (let i = 0; i < 10; i++) {
      const res = await t.request(
        'GET',
        `/api/v0/probe/keys?bookmark=${encodeURIComponent(bookmark)}${label ? `&label=${label}` : ''}`,
      );
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json();
      pages.push(page.docs.length);
      seen.push(...page.docs.map((d: { id: string }) => d.id).filter((id: string) => id.startsWith('p_')));
      if (!page.hasMore) {
        assert.equal(page.bookmark, '');
        return { seen, pages };
      }
      bookmark = page.bookmark;
    }
    throw new Error('did not finish');
  }

  test('walks every row exactly once, in order, with no trailing empty page', async () => {
    const { seen, pages } = await all();
    // 60 probe rows + the test app's own key
    assert.deepEqual(pages, [25, 25, 11]);
    assert.equal(new Set(seen).size, N);
    const expected = Array.from({ length: N }, (_, i) => i)
      .sort((a, b) => Math.floor(b / 7) - Math.floor(a / 7) || a - b)
      .map((i) => `p_${String(i).padStart(3, '0')}`);
    assert.deepEqual(seen, expected);
  });

  test('an exact multiple of the page size ends with hasMore false on the last full page', async () => {
    // 30 'even' rows: pages of 25 and 5
    const { pages } = await all('even');
    assert.deepEqual(pages, [25, 5]);
  });

  test('garbled, edited and foreign bookmarks are 400s', async () => {
    const first = (await t.request('GET', '/api/v0/probe/keys?bookmark=')).json();
    const [payload, sig] = first.bookmark.split('.');
    const edited = Buffer.from(JSON.stringify([999999, 'p_000'])).toString('base64url') + '.' + sig;
    for (const bad of ['garbage', `${payload}.AAAA`, edited, `${payload}.${sig}.x`]) {
      const res = await t.request('GET', `/api/v0/probe/keys?bookmark=${encodeURIComponent(bad)}`);
      assert.equal(res.statusCode, 400, bad);
      assert.match(res.json().errorMessage, /Invalid bookmark/);
    }
    // a bookmark from the unfiltered list is refused by the filtered one
    const res = await t.request('GET', `/api/v0/probe/keys?label=odd&bookmark=${encodeURIComponent(first.bookmark)}`);
    assert.equal(res.statusCode, 400);
  });
});
