import { randomUUID } from 'node:crypto';
import { Agent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';

/** What the client needs to reach Cielo's API E-commerce 3.0 (the CIELO_* configuration, the CA file read). */
export interface CieloConnection {
  merchantId: string;
  merchantKey: string;
  /** The transactional host (POST and PUT) and the query host (GET), without a trailing slash. */
  apiUrl: string;
  queryUrl: string;
  /** The CA bundle to trust Cielo's hosts with (null: the system's). */
  ca: Buffer | null;
  /** Longest wait for one answer. */
  timeoutMs: number;
  /** Most connections open at once to each host; a call beyond it waits for a free one. */
  maxSockets: number;
}

export interface CieloAnswer {
  status: number;
  /** The JSON body, or null when there was none (a 401, a 404). */
  body: unknown;
}

/** Cielo gave no answer to use (a timeout, a reset, a 5xx, a body that is not JSON): what happened there is unknown. */
export class CieloUnavailableError extends Error {}

/** Waits before the second and third tries of a query (a GET only: a sale's POST is never sent twice). */
const QUERY_BACKOFF_MS = [250, 1000];
/** Largest answer read from Cielo. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The client side of Cielo's API E-commerce 3.0 (../shared/reference/cielo-ecommerce-3.0.md §1):
 * `MerchantId` and `MerchantKey` headers on every call, JSON, a RequestId per call (a GUID, no idempotency
 * behind it), a timeout. `send` makes one try and answers whatever status came, or throws
 * CieloUnavailableError when none came (nothing is retried: POST /1/sales has no idempotency). `query`
 * (GET on the query host) retries network errors and 5xx with backoff, and answers 2xx and 404.
 * Bodies are never logged nor put in an error's text: a sale's carries the card.
 */
export class CieloClient {
  private readonly agent: Agent;

  constructor(private readonly connection: CieloConnection) {
    // One TLS context for every connection: without it each new socket builds its own (the CA bundle parsed
    // into a fresh certificate store, about 0.6 ms of CPU), which a burst of sales opening connections pays
    // once per sale. The connections a burst opened stay open for the next one (up to the cap, until Cielo
    // closes them), rather than all but 256 (Node's default) being closed and opened again.
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: connection.maxSockets,
      maxFreeSockets: connection.maxSockets,
      secureContext: createSecureContext(connection.ca ? { ca: connection.ca } : {}),
    });
  }

  /** One call to the transactional host, one try. */
  send(method: 'POST' | 'PUT', path: string, body?: unknown): Promise<CieloAnswer> {
    return this.call(method, `${this.connection.apiUrl}${path}`, body);
  }

  /** A GET on the query host, with retries; 2xx and 404 are answered, anything else after the retries is CieloUnavailableError. */
  async query(path: string): Promise<CieloAnswer> {
    for (let attempt = 0; ; attempt += 1) {
      let answer: CieloAnswer | null = null;
      let failure: Error | null = null;
      try {
        answer = await this.call('GET', `${this.connection.queryUrl}${path}`);
      } catch (error) {
        failure = error as Error;
      }
      if (answer && ((answer.status >= 200 && answer.status < 300) || answer.status === 404)) return answer;
      if (answer && answer.status < 500 && answer.status !== 429) throw new CieloUnavailableError(`Cielo answered ${answer.status} to GET ${pathOnly(path)}`);
      if (attempt >= QUERY_BACKOFF_MS.length) throw new CieloUnavailableError(`Cielo GET ${pathOnly(path)} failed: ${failure?.message ?? `HTTP ${answer?.status}`}`);
      await sleep(QUERY_BACKOFF_MS[attempt]);
    }
  }

  private call(method: string, url: string, body?: unknown): Promise<CieloAnswer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        url,
        {
          method,
          agent: this.agent,
          timeout: this.connection.timeoutMs,
          headers: {
            MerchantId: this.connection.merchantId,
            MerchantKey: this.connection.merchantKey,
            RequestId: randomUUID(),
            Accept: 'application/json',
            ...(payload === undefined ? { 'Content-Length': 0 } : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
          },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) incoming.destroy(new CieloUnavailableError(`Cielo's answer is over ${MAX_ANSWER_BYTES} bytes`));
            else chunks.push(chunk);
          });
          incoming.on('error', (error) => reject(new CieloUnavailableError(`Cielo's answer to ${method} ${pathOnly(url)} broke off: ${error.message}`)));
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = incoming.statusCode ?? 0;
            if (!text) return resolve({ status, body: null });
            try {
              resolve({ status, body: JSON.parse(text) as unknown });
            } catch {
              // A proxy's HTML page: nothing to read the outcome from.
              reject(new CieloUnavailableError(`Cielo answered ${method} ${pathOnly(url)} with ${status} and a body that is not JSON`));
            }
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${this.connection.timeoutMs} ms`)));
      outgoing.on('error', (error) => reject(new CieloUnavailableError(`Cielo ${method} ${pathOnly(url)}: ${error.message}`)));
      outgoing.end(payload);
    });
  }

  /** Its sockets closed with the application (Nest calls this on the provider's instance). */
  onModuleDestroy(): void {
    this.agent.destroy();
  }
}

/** A URL's or path's path, without its host or query (nothing of a request's data in a log line). */
function pathOnly(url: string): string {
  return url.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '');
}
