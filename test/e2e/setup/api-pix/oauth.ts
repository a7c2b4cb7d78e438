import { accessToken } from './ids';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

interface IssuedToken {
  expiresAt: number;
  scopes: Set<string>;
}

/** RFC 6749 §5.1: token answers, good or bad, must not be cached. */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * The PSP's token endpoint: OAuth 2.0 client credentials (RFC 6749 §4.4), the client authenticated by HTTP
 * Basic or by `client_id`/`client_secret` in the form (§2.3.1), one method per request; with `acceptJson`,
 * also Efí's JSON body. Tokens carry the scopes asked for that the application has enabled, or all those
 * it has enabled (every scope of the document unless set) when none is asked; each API Pix operation names
 * the scope it needs.
 */
export class TokenIssuer {
  issued = 0;
  private readonly tokens = new Map<string, IssuedToken>();
  /** The scopes enabled for the client's application: what a token asked for without `scope` carries. */
  private applicationScopes: string[] | null = null;

  constructor(
    private readonly client: ClientCredentials,
    private readonly ttlSeconds: number,
    private readonly knownScopes: string[],
    /** Efí's token request: a JSON body `{"grant_type": "client_credentials"}` with HTTP Basic (efi-pix-envio.md §1.3). */
    private readonly acceptJson = false,
  ) {}

  /**
   * The scopes the application has enabled (null: every known scope), as a PSP's portal switches them:
   * tokens issued from now on carry at most these; tokens already issued keep theirs.
   */
  setApplicationScopes(scopes: string[] | null): void {
    this.applicationScopes = scopes === null ? null : [...scopes];
  }

  /** The answer to `POST /oauth/token`. */
  answer(contentType: string | undefined, authorization: string | undefined, rawBody: string): TokenAnswer {
    const json = this.acceptJson && /^application\/json\b/i.test(contentType ?? '');
    if (!json && !/^application\/x-www-form-urlencoded\b/i.test(contentType ?? '')) return refusal(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
    const parsed = json ? jsonForm(rawBody) : new URLSearchParams(rawBody);
    if (typeof parsed === 'string') return refusal(400, 'invalid_request', parsed);
    const form = parsed;
    const repeated = [...new Set(form.keys())].find((key) => form.getAll(key).length > 1);
    if (repeated) return refusal(400, 'invalid_request', `parameter ${repeated} is repeated`);
    const fromBody = form.has('client_id') || form.has('client_secret');
    if (authorization && fromBody) return refusal(400, 'invalid_request', 'more than one client authentication method');
    const basic = authorization ? basicCredentials(authorization) : null;
    const presented = basic ?? { clientId: form.get('client_id') ?? '', clientSecret: form.get('client_secret') ?? '' };
    if (!this.isClient(presented)) return { ...refusal(401, 'invalid_client', 'client authentication failed'), ...(authorization ? basicChallenge() : {}) };
    const grantType = form.get('grant_type');
    if (!grantType) return refusal(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') return refusal(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported`);
    const asked = form.get('scope')?.split(' ').filter(Boolean);
    const unknown = asked?.filter((scope) => !this.knownScopes.includes(scope)) ?? [];
    if (unknown.length > 0) return refusal(400, 'invalid_scope', `unknown scope ${unknown.join(' ')}`);
    const enabled = this.applicationScopes ?? this.knownScopes;
    return this.issue(asked && asked.length > 0 ? asked.filter((scope) => enabled.includes(scope)) : enabled);
  }

  /** The scopes of a valid, unexpired bearer token in `authorization`, or null. */
  scopesOf(authorization: string | undefined): Set<string> | null {
    const match = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
    const token = match ? this.tokens.get(match[1]) : undefined;
    if (!token || token.expiresAt <= Date.now()) return null;
    return token.scopes;
  }

  /** Every token issued so far stops working. */
  expireAll(): void {
    this.tokens.clear();
  }

  private issue(scopes: string[]): TokenAnswer {
    const token = accessToken();
    this.tokens.set(token, { expiresAt: Date.now() + this.ttlSeconds * 1000, scopes: new Set(scopes) });
    this.issued += 1;
    return { status: 200, headers: NO_STORE, body: { access_token: token, token_type: 'Bearer', expires_in: this.ttlSeconds, scope: scopes.join(' ') } };
  }

  private isClient(presented: ClientCredentials): boolean {
    return presented.clientId === this.client.clientId && presented.clientSecret === this.client.clientSecret;
  }
}

/**
 * A JSON token request as form parameters: an object of strings with `grant_type` only (the schema
 * `TokenRequest` of efi-pix-envio.schemas.json is strict), or the reason it is not one.
 */
function jsonForm(rawBody: string): URLSearchParams | string {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return 'the body is not JSON';
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object';
  const entries = Object.entries(body as Record<string, unknown>);
  const extra = entries.find(([name]) => name !== 'grant_type');
  if (extra) return `${extra[0]} is not a parameter of the token request`;
  if (entries.some(([, value]) => typeof value !== 'string')) return 'grant_type must be a string';
  return new URLSearchParams(entries as Array<[string, string]>);
}

function refusal(status: number, error: string, description: string): TokenAnswer {
  return { status, headers: NO_STORE, body: { error, error_description: description } };
}

function basicChallenge(): { headers: Record<string, string> } {
  return { headers: { ...NO_STORE, 'WWW-Authenticate': 'Basic realm="API Pix"' } };
}

/**
 * The credentials of an HTTP Basic header. RFC 6749 §2.3.1 form-encodes the id and the secret before Base64
 * (openid-client does), so each part is form-decoded; a client that skips the encoding is told apart only
 * by credentials holding `+` or `%`.
 */
function basicCredentials(authorization: string): ClientCredentials | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization);
  if (!match) return null;
  const text = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  return { clientId: formDecoded(text.slice(0, colon)), clientSecret: formDecoded(text.slice(colon + 1)) };
}

function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
