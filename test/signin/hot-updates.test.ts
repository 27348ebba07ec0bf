// An authorization row is inserted once per sign-in and rewritten by the code exchange and by every
// refresh rotation, none of which changes an indexed column. On PostgreSQL such an update stays on
// the row's page (a HOT update, no new index entries) only when the page has room for the new row
// version: the table keeps 30% of each page free for them (fillfactor 70, migration 0030). Without
// it, a row on a page filled by later sign-ins moved to another page on each of these writes and
// added an entry to every index of the table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { TEST_DB } from '../helpers/app.ts';
import { authorizationRow, authorizeCode, codeExchangeBody } from '../helpers/signin.ts';
import { useApp } from '../helpers/use-app.ts';

const TOKEN = '/api/v0/signin/token';

describe('authorization updates on PostgreSQL', {
  skip: TEST_DB !== 'postgres' && 'PostgreSQL only: SQLite has no fillfactor or HOT updates',
}, () => {
  const t = useApp();

  test('the exchange rewrites the authorization on its own page, though later sign-ins filled it', async () => {
    const { code, client } = await authorizeCode(t);
    const page = async () => {
      const r = await sql<{ block: string }>`select (ctid::text::point)[0]::text as block
        from signin_authorizations where client_id = ${client.clientId}`.execute(t.ctx.db);
      assert.equal(r.rows.length, 1);
      return r.rows[0]!.block;
    };
    const first = await page();
    // later sign-ins, as many as several pages hold
    const now = Date.now();
    await t.ctx.db
      .insertInto('signin_authorizations')
      .values(
        Array.from({ length: 120 }, (_, i) =>
          authorizationRow({
            authorization_id: String(i).padStart(32, 'f'),
            code_hash: String(i).padStart(64, 'e'),
            client_id: 'other-client',
            message: 'm'.repeat(300),
            created_at: now,
          }),
        ),
      )
      .execute();
    const exchanged = await t.request('POST', TOKEN, { body: codeExchangeBody(client, code) });
    assert.equal(exchanged.statusCode, 200, exchanged.body);
    assert.equal(await page(), first, 'the exchange kept the row on its page');
    // The rotation is not checked the same way: its room on the page comes from pruning the version
    // the exchange left behind, which waits while any older snapshot in the database is open (the
    // test suite runs other files on the same database at the same time).
  });
});
