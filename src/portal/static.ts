// Serves the built web portal (portal/dist, built by `npm install`): the console at `/`, the
// public claim page at `/claim/{claimId}`, and content-hashed assets under `/assets/` that never
// change (cached for a year, immutable). HTML is never cached and carries a strict CSP with no
// inline script or style. Files are read and gzipped once at start.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import {
  cookieName,
  findConsoleSession,
  mintVisitorCookie,
  readCookie,
  setSessionCookie,
  VISITOR_TTL_MS,
} from './console-session.ts';

export const PORTAL_DIST = fileURLToPath(new URL('../../portal/dist/', import.meta.url));

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

interface Asset {
  type: string;
  raw: Buffer;
  gz: Buffer | null;
}

function load(path: string): Asset {
  const raw = readFileSync(path);
  const type = TYPES[extname(path)] ?? 'application/octet-stream';
  const gz = /^(text|application\/json|image\/svg)/.test(type) && raw.length > 512 ? gzipSync(raw, { level: 9 }) : null;
  return { type, raw, gz };
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  reply
    .header('content-type', asset.type)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff');
  if (asset.gz && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')))
    return reply.header('content-encoding', 'gzip').send(asset.gz);
  return reply.send(asset.raw);
}

/**
 * The console page names the service's own origin (PUBLIC_URL) in a meta tag: opened at another
 * address (localhost for 127.0.0.1), the page offers the right link, since no sign-in works there.
 */
function withPublicOrigin(ctx: AppContext, page: Asset): Asset {
  const origin = new URL(ctx.config.publicUrl).origin.replace(/[&"<>]/g, '');
  const raw = Buffer.from(
    page.raw.toString('utf8').replace('</head>', `<meta name="platform-public-origin" content="${origin}"></head>`),
  );
  return { type: page.type, raw, gz: raw.length > 512 ? gzipSync(raw, { level: 9 }) : null };
}

export function registerPortalStatic(app: FastifyInstance, ctx: AppContext): void {
  const built = existsSync(join(PORTAL_DIST, 'index.html'));
  const pages = built
    ? {
        console: withPublicOrigin(ctx, load(join(PORTAL_DIST, 'index.html'))),
        claim: load(join(PORTAL_DIST, 'claim.html')),
      }
    : null;
  const assets = new Map<string, Asset>();
  if (built && existsSync(join(PORTAL_DIST, 'assets'))) {
    for (const f of readdirSync(join(PORTAL_DIST, 'assets'))) assets.set(f, load(join(PORTAL_DIST, 'assets', f)));
  }

  // The claim page needs three reads before it can render; preload hints in its HTML start them
  // while the scripts load instead of after they ran (the page's fetches then reuse them).
  const claimPage = (claimId: string): Asset => {
    const hints = [`/api/v0/claim/${encodeURIComponent(claimId)}`, '/api/v0/plugins/core', '/api/v0/console/session']
      .map((href) => `<link rel="preload" as="fetch" crossorigin href="${href}">`)
      .join('');
    const raw = Buffer.from(pages!.claim.raw.toString('utf8').replace('</head>', `${hints}</head>`));
    return { type: pages!.claim.type, raw, gz: null };
  };

  const page =
    (which: 'console' | 'claim') =>
    async (request: FastifyRequest<{ Params: { claimId?: string } }>, reply: FastifyReply) => {
      reply
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CSP)
        .header('x-frame-options', 'DENY')
        .header('referrer-policy', 'same-origin');
      // A visitor cookie lets the page read the API before its user signs in (console-session.ts).
      const current = readCookie(request, cookieName(ctx));
      if (current === null || !(await findConsoleSession(ctx, current)))
        setSessionCookie(ctx, reply, mintVisitorCookie(ctx), VISITOR_TTL_MS);
      if (!pages) {
        return reply
          .code(503)
          .header('content-type', 'text/plain; charset=utf-8')
          .send('The web portal is not built. Run `npm install` (it builds portal/dist), then restart.');
      }
      return send(request, reply, which === 'claim' ? claimPage(request.params.claimId ?? '') : pages[which]);
    };
  const hidden = { schema: { hide: true } };
  app.get('/', hidden, page('console'));
  app.get('/claim/:claimId', hidden, page('claim'));
  app.get<{ Params: { file: string } }>('/assets/:file', hidden, async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (!asset) return reply.code(404).send({ errorMessage: `Route not found: GET /assets/${request.params.file}` });
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    return send(request, reply, asset);
  });
}
