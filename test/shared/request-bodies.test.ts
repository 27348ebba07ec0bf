// Bugs found by the operability review (issue 15, "Bugs"): each test is the case that was observed.
import { before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import type { SignedIn } from '../helpers/signin.ts';
import { manager } from '../claims/helpers.ts';

describe('request bodies', () => {
  let m: SignedIn;
  const t = useApp({ listen: true });
  before(async () => {
    m = await manager(t);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const json = async (res: Response) => (await res.json()) as Record<string, any>;
  // bytes, not a string: fetch adds no content type of its own to those
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(t.url + path, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, ...headers },
      ...(body !== undefined ? { body: new TextEncoder().encode(body) } : {}),
    });

  test('an empty body with content-type application/json is {} where the body is optional', async () => {
    const res = await post(
      '/api/v0/auth/status',
      { 'content-type': 'application/json', authorization: `Bearer ${m.accessToken}` },
      '',
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await json(res)).signedIn, true);
  });

  test('an empty JSON body where fields are required: a 400 in our shape saying the body is empty', async () => {
    const res = await post(
      '/api/v0/claims',
      { 'content-type': 'application/json', authorization: `Bearer ${m.accessToken}` },
      '',
    );
    assert.equal(res.status, 400);
    const body = await json(res);
    assert.deepEqual(Object.keys(body), ['errorMessage']);
    assert.match(body.errorMessage, /empty/);
    assert.match(body.errorMessage, /"claims"/);
  });

  test('a JSON body without a JSON content type (curl -d) is a 415 saying JSON is expected', async () => {
    const body = JSON.stringify({ claims: [] });
    for (const headers of [
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'text/plain' },
      {},
    ] as Record<string, string>[]) {
      const res = await post('/api/v0/claims', { authorization: `Bearer ${m.accessToken}`, ...headers }, body);
      assert.equal(res.status, 415, JSON.stringify(headers));
      const { errorMessage } = await json(res);
      assert.match(errorMessage, /content-type: application\/json/);
      if (!headers['content-type']) assert.match(errorMessage, /^Missing content type/);
    }
  });
});
