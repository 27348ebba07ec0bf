// One error model for the whole API: every failure answers `{ errorMessage, error?, unauthorized? }`.
// Throw an ApiError (or one of the helpers) anywhere below a route; the app's error handler
// turns it into the response. Anything else is a genuine fault and becomes a 500.

export interface ErrorBody {
  errorMessage: string;
  error?: string;
  unauthorized?: true;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;
  constructor(
    statusCode: number,
    errorMessage: string,
    extra: Partial<ErrorBody> = {},
    headers: Record<string, string> = {},
  ) {
    super(errorMessage);
    this.statusCode = statusCode;
    this.body = { errorMessage, ...extra };
    this.headers = headers;
  }
}

export const badRequest = (message: string, extra?: Partial<ErrorBody>) => new ApiError(400, message, extra);
export const unauthorized = (message: string) => new ApiError(401, message, { unauthorized: true });
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, message, {}, { 'retry-after': String(retryAfterSeconds) });
