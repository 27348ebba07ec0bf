import { describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { badRequest } from '../../src/shared/errors.ts';

// A probe route with a strict body schema exercises the shared validation and error machinery.
const Probe = Type.Object(
  {
    label: Type.String(),
    count: Type.Integer({ minimum: 0 }),
    nested: Type.Optional(Type.Object({ flag: Type.Boolean() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

describe('error model', () => {
  const t = useApp({
    env: { BODY_LIMIT: '2048' },
    extend(app) {
      app.post('/api/v0/probe', { schema: { body: Probe } }, async (req) => ({ echoed: req.body }));
      app.get('/api/v0/probe/fail', async () => {
        throw badRequest('Probe says no');
      });
      app.get('/api/v0/probe/crash', async () => {
        throw new Error('secret internal detail');
      });
    },
  });

  const post = (payload: string, contentType = 'application/json') =>
    t.app.inject({
      method: 'POST',
      url: '/api/v0/probe',
      headers: { 'x-api-key': t.apiKey, 'content-type': contentType },
      payload,
    });

  test('valid body passes', async () => {
    const res = await post(JSON.stringify({ label: 'a', count: 1 }));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { echoed: { label: 'a', count: 1 } });
  });

  test('malformed JSON is a 400 without a stack trace', async () => {
    const res = await post('{"label": "a",');
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errorMessage, 'Malformed JSON in request body');
    assert.doesNotMatch(res.body, /at .*\.js|stack/i);
  });

  test('unknown field is a 400 naming it', async () => {
    const res = await post(JSON.stringify({ label: 'a', count: 1, extra: true }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /unknown field "extra"/);
  });

  test('unknown nested field is a 400 naming its path', async () => {
    const res = await post(JSON.stringify({ label: 'a', count: 1, nested: { flag: true, bad: 1 } }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /body\.nested has unknown field "bad"/);
  });

  test('wrong type is a 400 naming the field, never coerced', async () => {
    const res = await post(JSON.stringify({ label: 'a', count: '1' }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /body\.count must be integer/);
    const res2 = await post(JSON.stringify({ label: 5, count: 1 }));
    assert.equal(res2.statusCode, 400);
    assert.match(res2.json().errorMessage, /body\.label must be string/);
  });

  test('missing field is a 400 naming it', async () => {
    const res = await post(JSON.stringify({ label: 'a' }));
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /missing required field "count"/);
  });

  test('oversized body is a 413', async () => {
    const res = await post(JSON.stringify({ label: 'x'.repeat(5000), count: 1 }));
    assert.equal(res.statusCode, 413);
    assert.match(res.json().errorMessage, /larger than the limit of 2048 bytes/);
  });

  test('wrong content type is a 415', async () => {
    const res = await post('label=a', 'text/plain');
    assert.equal(res.statusCode, 415);
    assert.match(
      res.json().errorMessage,
      /Unsupported content type "text\/plain": send the body as JSON with content-type: application\/json/,
    );
  });

  test('ApiError thrown in a handler keeps its status and message', async () => {
    const res = await t.request('GET', '/api/v0/probe/fail');
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { errorMessage: 'Probe says no' });
  });

  test('a genuine fault is a 500 that leaks nothing', async () => {
    const res = await t.request('GET', '/api/v0/probe/crash');
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), { errorMessage: 'Internal server error' });
  });

  test('unknown route is a 404 in the same shape', async () => {
    const res = await t.request('GET', '/api/v0/nothing-here');
    assert.equal(res.statusCode, 404);
    assert.match(res.json().errorMessage, /Route not found: GET \/api\/v0\/nothing-here/);
  });

  test('responses carry a request id, also on errors, and honour a caller-supplied one', async () => {
    const res = await t.request('GET', '/healthz');
    const err = await t.request('GET', '/api/v0/probe/fail');
    assert.match(String(res.headers['x-request-id']), /^[\w-]{8}-[0-9a-z]+$/);
    assert.match(String(err.headers['x-request-id']), /^[\w-]{8}-[0-9a-z]+$/);
    assert.notEqual(res.headers['x-request-id'], err.headers['x-request-id']);
    const mine = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(mine.headers['x-request-id'], 'trace-123');
  });
});
