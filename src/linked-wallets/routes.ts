// Linked wallets: a signed-in account links further addresses, each proved by that wallet's own
// signature (link.ts), lists them and unlinks them. Challenge, link and unlink need a console
// session or a token holding manageLinkedWallets; the list needs any session.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { errorResponses } from '../shared/schemas.ts';
import { requireSession, type Session } from '../shared/session.ts';
import { completeLink, createLinkChallenge, LINK_PATH, listLinks, unlink } from './link.ts';

/** The scope a token needs to link and unlink wallets (console sessions need none). */
export const LINKED_WALLETS_SCOPE = 'manageLinkedWallets';

const tags = ['linked wallets'];
const LinkedWallet = Type.Object({
  address: Type.String(),
  platformAddress: Type.String(),
  chain: Type.String(),
  linkedAt: Type.String(),
});

async function requireLinker(request: FastifyRequest): Promise<Session> {
  return request.browserAuth?.session ?? requireSession(request, LINKED_WALLETS_SCOPE);
}

export const linkedWallets: Routes = {
  register(fastify, ctx) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.post(
      `${LINK_PATH}/challenge`,
      {
        schema: {
          tags,
          summary: 'Ask for the message a further wallet signs to be linked to the signed-in account',
          description:
            'Answers an EIP-4361 message naming the wallet, this account, a nonce and an expiry (10 minutes). The wallet signs it (EIP-191 for an 0x address, ADR-36 for a native one) and the account posts the signature to `POST /api/v0/linkedWallets`. Needs a console session, or a token holding manageLinkedWallets.',
          body: Type.Object({ address: Type.String({ maxLength: 128 }) }, { additionalProperties: false }),
          response: {
            200: Type.Object({ requestId: Type.String(), message: Type.String(), expiresAt: Type.String() }),
            ...errorResponses(400, 401, 403, 409, 429),
          },
        },
      },
      async (request) => createLinkChallenge(ctx, await requireLinker(request), request.body.address),
    );

    app.post(
      LINK_PATH,
      {
        schema: {
          tags,
          summary: "Link a wallet to the signed-in account with that wallet's signature of its link message",
          description:
            'Each link message is accepted once and only before its expiry. An address is linked to one account at a time; links are one level deep (a linked wallet holds no links, an account with links is not linked itself).',
          body: Type.Object(
            {
              requestId: Type.String({ maxLength: 64 }),
              signature: Type.String({ maxLength: 16_384 }),
              publicKey: Type.Optional(Type.String({ maxLength: 128 })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ linkedWallet: LinkedWallet }),
            ...errorResponses(400, 401, 403, 404, 409),
          },
        },
      },
      async (request) => ({ linkedWallet: await completeLink(ctx, await requireLinker(request), request.body) }),
    );

    app.get(
      LINK_PATH,
      {
        schema: {
          tags,
          summary: "The signed-in account's linked wallets, and the account its own address is linked to",
          response: {
            200: Type.Object({
              account: Type.String(),
              linkedTo: Type.Union([Type.String(), Type.Null()]),
              linkedWallets: Type.Array(LinkedWallet),
            }),
            ...errorResponses(401),
          },
        },
      },
      async (request) => listLinks(ctx, request.browserAuth?.session ?? (await requireSession(request))),
    );

    app.delete(
      `${LINK_PATH}/:address`,
      {
        schema: {
          tags,
          summary:
            "Unlink a wallet from the signed-in account (or, naming the session's own address, leave the account it is linked to)",
          params: Type.Object({ address: Type.String({ maxLength: 128 }) }),
          response: { 200: Type.Object({}), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        await unlink(ctx, await requireLinker(request), request.params.address);
        return {};
      },
    );
  },
};
