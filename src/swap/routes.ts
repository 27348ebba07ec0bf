// HTTP surface of swap estimation: POST /api/v0/swap/estimate and its deprecated alias.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Routes } from '../shared/capability.ts';
import { errorResponses } from '../shared/schemas.ts';
import { estimateSwap } from './estimate.ts';
import { SwapService } from './service.ts';
import { validateEstimate, type EstimateBody } from './validate.ts';

const Affiliate = Type.Object(
  {
    address: Type.String({ maxLength: 128, description: 'Affiliate address on that chain' }),
    basis_points_fee: Type.String({
      maxLength: 16,
      description: 'Integer string, 0 to 10000; fee = floor(minimum out × bps / 10000)',
    }),
  },
  { additionalProperties: false },
);

export const EstimateBodySchema = Type.Object(
  {
    tokenIn: Type.String({
      minLength: 1,
      maxLength: 512,
      description: '`amount:<n>,denom:<denom>` or `<n><denom>`; n a positive integer in base units',
    }),
    tokenInChainId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Default `platform-1`' })),
    tokenOutDenom: Type.String({ minLength: 1, maxLength: 256, description: 'Denom to receive' }),
    tokenOutChainId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Default `platform-1`' })),
    chainIdsToAddresses: Type.Record(Type.String(), Type.String({ maxLength: 128 }), {
      description:
        '`platform-1` (required): the sender, native or 0x form; `1`: an EVM address. Other chains are derived.',
    }),
    chainIdsToAffiliates: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({ affiliates: Type.Array(Affiliate, { maxItems: 100 }) }, { additionalProperties: false }),
        {
          description:
            '`{ [chainId]: { affiliates: [{ address, basis_points_fee }] } }`; per chain the basis points add up to at most 10000',
        },
      ),
    ),
    // one type list rather than anyOf, so a wrong type gets one clear message
    slippageTolerancePercent: Type.Unsafe<string | number>({
      type: ['string', 'number'],
      maxLength: 64,
      description: 'Percent, 0 to 100, string or number',
    }),
    forcefulRecheckCompliance: Type.Optional(Type.Boolean({ description: 'Skip the 5-minute compliance cache' })),
    isLocalOnly: Type.Optional(
      Type.Boolean({ description: 'Use only the platform pools (both chains must be platform-1)' }),
    ),
  },
  { additionalProperties: false },
);

const MultiChainMsg = Type.Object({
  chain_id: Type.String(),
  path: Type.Array(Type.String()),
  msg: Type.String({ description: 'JSON of the Cosmos message (proto3 JSON, snake_case)' }),
  msg_type_url: Type.String(),
});

const EvmTx = Type.Object({
  chain_id: Type.String(),
  to: Type.String(),
  value: Type.String(),
  data: Type.String(),
  required_erc20_approvals: Type.Optional(
    Type.Array(Type.Object({ token: Type.String(), spender: Type.String(), amount: Type.Optional(Type.String()) })),
  ),
  signer_address: Type.String(),
});

const AssetStep = Type.Object({
  denom: Type.String(),
  chainId: Type.String(),
  how: Type.Union([Type.Literal('genesis'), Type.Literal('swap'), Type.Literal('transfer')]),
});

export const EstimateResponseSchema = Type.Object({
  success: Type.Boolean(),
  estimate: Type.Object({
    tokenOutAmount: Type.String({ description: 'Amount received (after affiliate fees), base units' }),
    tokenInAmount: Type.String(),
    skipGoMsgs: Type.Array(
      Type.Object({ multi_chain_msg: Type.Optional(MultiChainMsg), evm_tx: Type.Optional(EvmTx) }),
    ),
    assetPath: Type.Array(AssetStep),
    doesSwap: Type.Boolean(),
    lowLiquidityWarning: Type.Optional(Type.Boolean()),
    complianceNotPassedWarning: Type.Optional(Type.Boolean()),
    complianceErrorMessage: Type.Optional(Type.String()),
    estimatedTime: Type.Optional(Type.Number()),
    fallbackAsset: Type.Optional(Type.Object({ denom: Type.String(), chainId: Type.String() })),
    autoRedirectedToWETH: Type.Optional(Type.Boolean()),
    rerouted: Type.Optional(Type.Boolean()),
  }),
});

const DEPRECATED_ALIAS = '/api/v0/swaps/estimate';
export const ESTIMATE_ROUTE = '/api/v0/swap/estimate';

export const swap: Routes = {
  async register(app, ctx) {
    const svc = new SwapService(ctx);
    await svc.start();
    ctx.onClose.push(() => svc.stop());

    const schema = {
      tags: ['swap'],
      summary: 'Estimate a swap and get the messages to sign',
      body: EstimateBodySchema,
      response: { 200: EstimateResponseSchema, ...errorResponses(400, 401, 502) },
    };
    const handler = async (request: FastifyRequest) =>
      estimateSwap(svc, validateEstimate(request.body as EstimateBody));
    app.post(ESTIMATE_ROUTE, { schema }, handler);
    app.post(
      DEPRECATED_ALIAS,
      {
        schema: { ...schema, summary: `Deprecated alias of ${ESTIMATE_ROUTE}`, deprecated: true },
        // every answer of the alias, errors included, says it is deprecated and names its successor
        onSend: async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
          reply.header('deprecation', 'true');
          reply.header('link', `<${ESTIMATE_ROUTE}>; rel="successor-version"`);
          return payload;
        },
      },
      handler,
    );
  },
};
