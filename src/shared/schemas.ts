// TypeBox building blocks shared by every capability's route schemas.
import { Type, type TSchema } from 'typebox';

export const ErrorResponse = Type.Object(
  {
    errorMessage: Type.String({ description: 'What went wrong, in words; a schema failure names the field' }),
    error: Type.Optional(Type.String({ description: 'A machine-readable code, where the route defines one' })),
    unauthorized: Type.Optional(
      Type.Literal(true, { description: 'Present when the credentials (API key, session) were the problem' }),
    ),
  },
  { $id: 'ErrorResponse', additionalProperties: true },
);

/** Large numbers travel as decimal strings (UNIX ms, versions, ids, range bounds). */
export const NumberString = Type.String({ pattern: '^[0-9]+$', description: 'Unsigned integer as a decimal string' });

export const UintRangeSchema = Type.Object(
  { start: NumberString, end: NumberString },
  { additionalProperties: false, description: 'Inclusive range of unsigned 64-bit integers' },
);

/**
 * Longest path parameter the router accepts (Fastify `maxParamLength`): every id that travels in a
 * path (claim ids, addresses, store keys) is bounded by it at creation too, so none is unreachable.
 */
export const MAX_PATH_PARAM_LENGTH = 128;

export const AddressString = Type.String({
  minLength: 1,
  maxLength: MAX_PATH_PARAM_LENGTH,
  description: '0x… EVM address or native bech32 address',
});

export const Bookmark = Type.String({ maxLength: 2048, description: "Opaque cursor; '' for the first page" });

/** Standard error responses to attach to a route schema. */
export function errorResponses(...codes: number[]): Record<number, TSchema> {
  return Object.fromEntries(codes.map((c) => [c, Type.Ref('ErrorResponse')]));
}
