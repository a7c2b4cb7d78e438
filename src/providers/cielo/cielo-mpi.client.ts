import { Agent, request as httpsRequest } from 'node:https';
import { createSecureContext } from 'node:tls';
import { ProviderRefusedError } from '../provider-operation';

/** The CIELO_3DS_* configuration: Cielo's 3-D Secure MPI (Braspag's host) and the merchant's data for its token. */
export interface CieloMpiSettings {
  /** `https://mpisandbox.braspag.com.br` or `https://mpi.braspag.com.br` (no trailing slash). */
  url: string;
  clientId: string;
  clientSecret: string;
  /** The 10-digit establishment code (EC). */
  establishmentCode: string;
  /** Up to 25 characters. */
  merchantName: string;
  /** 4 digits. */
  mcc: string;
  /** What the page's `bpmpi_config` says (`SDB` sandbox, `PRD` production). */
  environment: 'SDB' | 'PRD';
  ca: Buffer | null;
  timeoutMs: number;
  /** Most connections open at once to the MPI (CIELO_MAX_SOCKETS, as for Cielo's API hosts). */
  maxSockets: number;
}

/** An access token for the `BP.Mpi` script on the seller's checkout page. */
export interface MpiAccessToken {
  accessToken: string;
  expiresAt: Date;
  environment: 'SDB' | 'PRD';
  /** The script to load from the MPI's host (v2.1). */
  scriptUrl: string;
}

/** The MPI would not give a token (its credentials or the merchant's data refused). */
export class MpiTokenRefusedError extends ProviderRefusedError {}

/** A token whose expiry cannot be read is taken to last this long (the manual's example is 20 minutes). */
const DEFAULT_LIFETIME_MS = 20 * 60_000;
/** Brasília's offset, for an `expires_in` given as a local date-time without one (the manual's example). */
const BRASILIA_OFFSET = '-03:00';

/**
 * The MPI's token endpoint (../shared/reference/cielo-ecommerce-3.0.md §8.2): `POST {mpi}/v2/auth/token`
 * with `Authorization: Basic base64(ClientId:ClientSecret)` and `{EstablishmentCode, MerchantName, MCC}`,
 * answered `{access_token, token_type, expires_in}`. One token per checkout load, single use (MPI 2.1), so
 * none is cached. `expires_in` is unconfirmed (the manual's table says minutes, its example shows a
 * date-time): the token's own `exp` claim (it is a JWT) is read first, then a number of minutes, then a
 * date-time (Brasília's when it has no offset), then 20 minutes.
 */
export class CieloMpiClient {
  private readonly agent: Agent;

  constructor(private readonly settings: CieloMpiSettings) {
    // One TLS context for every connection, as CieloClient's.
    this.agent = new Agent({ keepAlive: true, maxSockets: settings.maxSockets, secureContext: createSecureContext(settings.ca ? { ca: settings.ca } : {}) });
  }

  async token(): Promise<MpiAccessToken> {
    const { status, body } = await this.post('/v2/auth/token', {
      EstablishmentCode: this.settings.establishmentCode,
      MerchantName: this.settings.merchantName,
      MCC: this.settings.mcc,
    });
    if (status === 400 || status === 401 || status === 403) throw new MpiTokenRefusedError(`Cielo's 3-D Secure MPI refused the token request (HTTP ${status}): check CIELO_3DS_*`);
    const answer = typeof body === 'object' && body !== null ? (body as { access_token?: unknown; expires_in?: unknown }) : {};
    if (status < 200 || status >= 300 || typeof answer.access_token !== 'string' || answer.access_token === '') {
      throw new Error(`Cielo's 3-D Secure MPI answered HTTP ${status} without an access token`);
    }
    return {
      accessToken: answer.access_token,
      expiresAt: expiryOf(answer.access_token, answer.expires_in, new Date()),
      environment: this.settings.environment,
      scriptUrl: `${this.settings.url}/Scripts/BP.Mpi.3ds21.min.js`,
    };
  }

  private post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const payload = JSON.stringify(body);
    const basic = Buffer.from(`${this.settings.clientId}:${this.settings.clientSecret}`).toString('base64');
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        `${this.settings.url}${path}`,
        {
          method: 'POST',
          agent: this.agent,
          timeout: this.settings.timeoutMs,
          headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), Accept: 'application/json' },
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = null;
            try {
              parsed = text ? (JSON.parse(text) as unknown) : null;
            } catch {
              parsed = null;
            }
            resolve({ status: incoming.statusCode ?? 0, body: parsed });
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`Cielo's 3-D Secure MPI gave no answer within ${this.settings.timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  onModuleDestroy(): void {
    this.agent.destroy();
  }
}

/** When an MPI token expires: its JWT `exp`, else `expires_in` as minutes or as a date-time, else 20 minutes from `now`. */
export function expiryOf(token: string, expiresIn: unknown, now: Date): Date {
  const exp = jwtExpiry(token);
  if (exp) return exp;
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 && expiresIn < 24 * 60) return new Date(now.getTime() + expiresIn * 60_000);
  if (typeof expiresIn === 'string' && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.test(expiresIn)) {
    const text = expiresIn.replace(' ', 'T');
    const at = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${text}${BRASILIA_OFFSET}`);
    if (!Number.isNaN(at.getTime()) && at.getTime() > now.getTime()) return at;
  }
  return new Date(now.getTime() + DEFAULT_LIFETIME_MS);
}

function jwtExpiry(token: string): Date | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? new Date(claims.exp * 1000) : null;
  } catch {
    return null;
  }
}
