import { Agent, request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { BaseClient, custom, Issuer } from 'openid-client';
import { PixProblem, PixRequestRefusedError } from '../pix-provider.port';

/** What the client needs to reach a PSP's API Pix (the API_PIX_* configuration, files read). */
export interface ApiPixConnection {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM client certificate and key (mutual TLS), and the CA bundle to trust the PSP with (null: the system's). */
  cert: Buffer;
  key: Buffer;
  ca: Buffer | null;
  /** Longest wait for one answer. */
  timeoutMs: number;
  /** Whether the token asks for Pix Automático's scopes too. */
  automaticPix?: boolean;
  /** Whether the token asks for Efí's send scopes too (PAYOUT_PROVIDER=efi: pix.send, gn.pix.send.read). */
  pixSend?: boolean;
}

export interface ApiPixAnswer<T> {
  status: number;
  body: T;
}

/** The PSP did not answer well after every retry (network error, timeout, 5xx or 429): try again later. */
export class PixProviderUnavailableError extends Error {}

/** The scopes of the BCB's security manual for immediate charges and received Pix. */
const PIX_SCOPES = 'cob.write cob.read pix.write pix.read webhook.write webhook.read';
/** And for Pix Automático, asked only when it is configured (a PSP may refuse a token with scopes a client was not given). */
const AUTOMATIC_PIX_SCOPES =
  'payloadlocationrec.write payloadlocationrec.read rec.write rec.read cobr.write cobr.read webhookrec.write webhookrec.read webhookcobr.write webhookcobr.read';
/** And for Efí's Pix send, asked only when payouts go through it. */
const PIX_SEND_SCOPES = 'pix.send gn.pix.send.read';
/** A token is renewed this long before the PSP says it expires. */
const TOKEN_MARGIN_MS = 60_000;
/** Waits before the second and third tries of a call that failed for a reason that may pass. */
const BACKOFF_MS = [250, 1000];
/** Largest answer read from the PSP. */
const MAX_ANSWER_BYTES = 5 * 1024 * 1024;

/**
 * The client side of a PSP's API Pix: OAuth 2.0 client credentials (openid-client) with the client
 * certificate, the token cached until shortly before it expires and renewed once when a call answers
 * 401; every call over mutual TLS with a timeout; 5xx, 429, timeouts and network errors retried with
 * backoff; any other 4xx thrown as PixRequestRefusedError with the RFC 7807 problem. 404 is answered
 * to the caller, which decides what "none" means.
 */
export class ApiPixClient {
  private readonly logger = new Logger(ApiPixClient.name);
  private readonly agent: Agent;
  private readonly oauth: BaseClient;
  private token: { value: string; renewAt: number } | null = null;
  private pendingToken: Promise<string> | null = null;

  constructor(private readonly connection: ApiPixConnection) {
    const tls = { cert: connection.cert, key: connection.key, ...(connection.ca ? { ca: connection.ca } : {}) };
    this.agent = new Agent({ ...tls, keepAlive: true, maxSockets: 16 });
    const issuer = new Issuer({ issuer: new URL(connection.tokenUrl).origin, token_endpoint: connection.tokenUrl });
    this.oauth = new issuer.Client({ client_id: connection.clientId, client_secret: connection.clientSecret, token_endpoint_auth_method: 'client_secret_basic' });
    this.oauth[custom.http_options] = (_url, options) => ({ ...options, ...tls, timeout: connection.timeoutMs });
  }

  /**
   * One call to the API (path under API_PIX_BASE_URL, or with `fromOrigin` under its origin: a PSP's own
   * extensions, such as Efí's /v3/gn/pix), with the retries above (`once`: none, for a request that must
   * not be repeated before its fate is known; a 401 is still tried once more with a new token, as the PSP
   * did nothing with it); 2xx and 404 are answered.
   */
  async call<T>(method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE', path: string, body?: unknown, options: { fromOrigin?: boolean; once?: boolean } = {}): Promise<ApiPixAnswer<T>> {
    const retries = options.once ? 0 : BACKOFF_MS.length;
    const url = `${options.fromOrigin ? new URL(this.connection.baseUrl).origin : this.connection.baseUrl}${path}`;
    let renewed = false;
    for (let attempt = 0; ; attempt += 1) {
      let answer: ApiPixAnswer<unknown>;
      try {
        answer = await this.send(method, url, body, await this.accessToken());
      } catch (error) {
        if (attempt >= retries) throw new PixProviderUnavailableError(`API Pix ${method} ${path} failed: ${(error as Error).message}`);
        this.logger.warn({ err: error, method, path, attempt }, 'API Pix call failed; retrying');
        await sleep(BACKOFF_MS[attempt]);
        continue;
      }
      if (answer.status === 401 && !renewed) {
        // The token may have been revoked or expired early: one new token, one more try.
        renewed = true;
        this.token = null;
        attempt -= 1;
        continue;
      }
      if ((answer.status >= 200 && answer.status < 300) || answer.status === 404) return answer as ApiPixAnswer<T>;
      if (answer.status >= 500 || answer.status === 429) {
        if (attempt >= retries) throw new PixProviderUnavailableError(`API Pix ${method} ${path} answered ${answer.status}`);
        await sleep(BACKOFF_MS[attempt]);
        continue;
      }
      throw new PixRequestRefusedError(answer.status, problemOf(answer.body));
    }
  }

  /** The cached token, or a new one (one request at a time asks for it). */
  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.renewAt) return this.token.value;
    this.pendingToken ??= this.oauth
      .grant({
        grant_type: 'client_credentials',
        scope: [PIX_SCOPES, ...(this.connection.automaticPix ? [AUTOMATIC_PIX_SCOPES] : []), ...(this.connection.pixSend ? [PIX_SEND_SCOPES] : [])].join(' '),
      })
      .then((set) => {
        if (!set.access_token) throw new Error('The token endpoint answered no access_token');
        const expiresInMs = (set.expires_in ?? 300) * 1000;
        this.token = { value: set.access_token, renewAt: Date.now() + Math.max(expiresInMs - TOKEN_MARGIN_MS, expiresInMs / 2) };
        return set.access_token;
      })
      .finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  private send(method: string, url: string, body: unknown, token: string): Promise<ApiPixAnswer<unknown>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        url,
        {
          method,
          agent: this.agent,
          timeout: this.connection.timeoutMs,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) incoming.destroy(new Error(`API Pix answer over ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          incoming.on('error', reject);
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: incoming.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null });
            } catch {
              // A proxy's HTML error page: a failure that may pass when 5xx, a refusal otherwise.
              resolve({ status: incoming.statusCode ?? 0, body: { title: `Not JSON: ${text.slice(0, 80)}` } });
            }
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${this.connection.timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The refusal's body: an RFC 7807 problem (the BCB's), or Efí's own `{nome, mensagem}`. */
function problemOf(body: unknown): PixProblem {
  if (typeof body !== 'object' || body === null) return {};
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const { type, title, detail, nome, mensagem } = body as Record<string, unknown>;
  return { type: text(type), title: text(title), detail: text(detail), nome: text(nome), mensagem: text(mensagem) };
}
