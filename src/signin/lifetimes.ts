// Lifetimes of everything the sign-in flow issues (docs/security.md; RFC 6749 §4.1.2 recommends ≤ 10 min codes).
export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** A sign-in request (challenge) and its nonce: the message's Expiration Time. */
export const REQUEST_TTL_MS = 10 * MINUTE;
/** Server-side lifetime of an authorization code, whatever `options.issuedAtTimeWindowMs` says. */
export const CODE_TTL_MS = 10 * MINUTE;
/** Default of `options.issuedAtTimeWindowMs`. */
export const DEFAULT_ISSUED_AT_WINDOW_MS = 10 * MINUTE;
export const ACCESS_TOKEN_TTL_MS = DAY;
export const REFRESH_TOKEN_TTL_MS = 60 * DAY;
// Each refresh rotation resets both expirations (docs/signin.md). An absolute end of the token family is
// optional: SIGNIN_SESSION_MAX_AGE_DAYS (config.ts), off by default.
/** An id_token (OpenID Connect): it proves a sign-in to the client, which keeps its own session. */
export const ID_TOKEN_TTL_MS = 60 * MINUTE;
