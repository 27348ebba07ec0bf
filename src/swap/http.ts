// Outbound JSON over HTTP (undici), with a hard timeout and size cap. Upstream failures become
// UpstreamError so callers can answer 502 without leaking internals.
import { request } from 'undici';

export class UpstreamError extends Error {
  readonly status: number | null;
  readonly body: unknown;
  constructor(message: string, status: number | null = null, body: unknown = undefined) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

const MAX_BODY = 32 * 1024 * 1024;

async function readJson(res: Awaited<ReturnType<typeof request>>, url: string): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) {
      res.body.destroy();
      throw new UpstreamError(`response from ${url} is larger than ${MAX_BODY} bytes`, res.statusCode);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    throw new UpstreamError(`response from ${url} is not JSON`, res.statusCode);
  }
}

/** GET or POST JSON; resolves with the parsed body of a 2xx, throws UpstreamError otherwise. */
export async function fetchJson(
  url: string,
  opts: { method?: 'GET' | 'POST'; body?: unknown; timeoutMs: number },
): Promise<unknown> {
  let res;
  try {
    res = await request(url, {
      method: opts.method ?? 'GET',
      headers: {
        accept: 'application/json',
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (err) {
    throw new UpstreamError(`request to ${url} failed: ${(err as Error).message}`);
  }
  const body = await readJson(res, url);
  if (res.statusCode < 200 || res.statusCode >= 300)
    throw new UpstreamError(`${url} answered ${res.statusCode}`, res.statusCode, body);
  return body;
}
