// Domain code throws these; it never builds bodies. The error handler renders them per API
// (platform: GitLab's bodies; translation: Django REST framework's).

export type ErrorKind =
  | 'bad_request' // 400 {"message":"400 Bad request - <reason>"}
  | 'param' // 400 {"error":"<text>"} — parameter validation (Grape)
  | 'invalid' // 400 {"message":{"field":["msg"]}} — model validation
  | 'unauthorized' // 401
  | 'invalid_token' // 401 OAuth style + WWW-Authenticate
  | 'forbidden' // 403
  | 'insufficient_scope' // 403 OAuth style
  | 'not_found' // 404 "404 <Resource> Not Found"
  | 'record_not_found' // 404 "404 Not found"
  | 'not_allowed' // 405
  | 'conflict' // 409
  | 'precondition_failed' // 412
  | 'too_large' // 413
  | 'unprocessable' // 422
  | 'rate_limited' // 429
  | 'unavailable' // 503
  | 'refused' // <status> {"message": <message>} — a refusal that states its own message (GitLab's render_api_error!)
  | 'rejected' // <status> {"error": <text>} — GitLab's error!(text, status); Weblate's {"error": …} 500s
  | 'locked' // 423: a repository lock could not be taken (Weblate's repository-locked body)
  | 'raw'; // status + body given verbatim: the HTTP layer only (the domain states kinds, the edge renders them)

/** Messages of a refusal: one, several (GitLab's `["…"]` lists), or per field (`{"name": ["…"]}`). */
export type Message = string | string[] | FieldErrors;
/** A model's errors by attribute: GitLab `{"name": ["can't be blank"]}`; Weblate's DRF also uses a bare string. */
export type FieldErrors = Record<string, string[] | string>;

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  /** reason / resource / field map / body, depending on kind */
  readonly detail: unknown;
  readonly headers: Record<string, string>;
  constructor(kind: ErrorKind, status: number, detail?: unknown, headers: Record<string, string> = {}) {
    super(typeof detail === 'string' ? detail : kind);
    this.kind = kind;
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export const Errors = {
  badRequest: (reason?: string) => new DomainError('bad_request', 400, reason),
  param: (text: string) => new DomainError('param', 400, text),
  /** Field errors: GitLab `{"message": {field: [msg]}}`, Weblate the map itself (DRF's serializer errors). */
  invalid: (fields: FieldErrors, status = 400) => new DomainError('invalid', status, fields),
  unauthorized: (reason?: string) => new DomainError('unauthorized', 401, reason),
  invalidToken: (description: string) => new DomainError('invalid_token', 401, description),
  forbidden: (reason?: string) => new DomainError('forbidden', 403, reason),
  insufficientScope: (scopes: string[]) => new DomainError('insufficient_scope', 403, scopes),
  notFound: (resource?: string) => new DomainError('not_found', 404, resource),
  recordNotFound: () => new DomainError('record_not_found', 404),
  notAllowed: (msg?: string) => new DomainError('not_allowed', 405, msg),
  conflict: (msg?: Message) => new DomainError('conflict', 409, msg),
  preconditionFailed: () => new DomainError('precondition_failed', 412),
  tooLarge: () => new DomainError('too_large', 413),
  unprocessable: (msg?: unknown) => new DomainError('unprocessable', 422, msg),
  rateLimited: (retryAfter = 60, msg?: unknown) => new DomainError('rate_limited', 429, msg, { 'retry-after': String(retryAfter) }),
  unavailable: () => new DomainError('unavailable', 503),
  /** A refusal in the service's own words, at the status GitLab gives it (400 unless said). */
  refused: (message: Message, status = 400) => new DomainError('refused', status, message),
  /** GitLab's `{"error": …}` refusals (hook URLs, the project limit) and Weblate's `{"error": …}` failures. */
  rejected: (error: string | string[], status = 422) => new DomainError('rejected', status, error),
  /** 423: the lock of `scope` ("component X") was not obtained. */
  locked: (scope: string) => new DomainError('locked', 423, `Could not obtain the repository lock for ${scope} to perform the operation.`),
  raw: (status: number, body: unknown, headers: Record<string, string> = {}) => new DomainError('raw', status, body, headers),
};

const STATUS_TEXT: Record<number, string> = {
  400: '400 Bad request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  412: '412 Precondition Failed',
  413: '413 Request Entity Too Large',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  503: '503 Service Unavailable',
};

const BEARER_REALM = 'Bearer realm="The API"';

/** GitLab's body for a DomainError (reference §2). */
export function platformBody(e: DomainError): { status: number; body: unknown; headers: Record<string, string> } {
  const withReason = (base: string, reason: unknown) => (reason ? `${base} - ${reason}` : base);
  const h = { ...e.headers };
  switch (e.kind) {
    case 'bad_request':
      return { status: 400, body: { message: withReason('400 Bad request', e.detail) }, headers: h };
    case 'param':
      return { status: 400, body: { error: e.detail }, headers: h };
    case 'invalid':
      return { status: e.status, body: { message: e.detail }, headers: h };
    case 'unauthorized':
      return { status: 401, body: { message: withReason('401 Unauthorized', e.detail) }, headers: h };
    case 'invalid_token':
      h['www-authenticate'] = `${BEARER_REALM}, error="invalid_token", error_description="${e.detail}"`;
      return { status: 401, body: { error: 'invalid_token', error_description: e.detail }, headers: h };
    case 'forbidden':
      return { status: 403, body: { message: withReason('403 Forbidden', e.detail) }, headers: h };
    case 'insufficient_scope':
      return {
        status: 403,
        body: {
          error: 'insufficient_scope',
          error_description: 'The request requires higher privileges than provided by the access token.',
          scope: (e.detail as string[]).join(' '),
        },
        headers: h,
      };
    case 'not_found':
      return { status: 404, body: { message: e.detail ? `404 ${e.detail} Not Found` : '404 Not Found' }, headers: h };
    case 'record_not_found':
      return { status: 404, body: { message: '404 Not found' }, headers: h };
    case 'refused':
      return { status: e.status, body: { message: e.detail }, headers: h };
    case 'rejected':
      return { status: e.status, body: { error: e.detail }, headers: h };
    case 'raw':
      return { status: e.status, body: e.detail, headers: h };
    default:
      return { status: e.status, body: { message: e.detail ?? STATUS_TEXT[e.status] ?? String(e.status) }, headers: h };
  }
}
