// RFC 6749 §5.2 errors for the token and revoke endpoints. The body carries the OAuth fields for
// generic OAuth clients and `errorMessage` for the reference SDK: { error, error_description, errorMessage }.
import { ApiError } from '../shared/errors.ts';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

export function oauthError(
  error: OAuthErrorCode,
  description: string,
  opts: { basicAuthUsed?: boolean; realm?: string } = {},
): ApiError {
  const status = error === 'invalid_client' ? 401 : 400;
  const headers: Record<string, string> = {};
  // RFC 6749 §5.2: a client that authenticated with the Authorization header gets a challenge naming it.
  if (status === 401 && opts.basicAuthUsed)
    headers['www-authenticate'] = `Basic realm="${opts.realm ?? 'platform'}", error="${error}"`;
  return new ApiError(status, description, { error, error_description: description }, headers);
}
