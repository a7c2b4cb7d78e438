import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LookupAddress } from 'node:dns';
import { isIPv6, LookupFunction } from 'node:net';
import { ResolvedUrl } from './url-safety';

export interface SendResult {
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * POSTs a JSON body to the resolved URL, connecting to the address that was checked (the host name is
 * still sent as Host and TLS SNI). Answers with the status, or the error, within `timeoutMs`.
 */
export function postJson(target: ResolvedUrl, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendResult> {
  const started = Date.now();
  const address = target.addresses[0];
  const family = isIPv6(address) ? 6 : 4;
  const request = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const done = (responseStatus: number | null, error: string | null) =>
      resolve({ responseStatus, error, durationMs: Date.now() - started });
    const req = request(
      target.url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
        lookup: ((_host: string, options: { all?: boolean }, callback: (error: null, ...result: unknown[]) => void) => {
          if (options?.all) callback(null, [{ address, family } satisfies LookupAddress]);
          else callback(null, address, family);
        }) as unknown as LookupFunction,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (response) => {
        response.resume(); // the body is not needed; drain it so the socket is freed
        response.on('end', () => done(response.statusCode ?? null, null));
        response.on('error', (error) => done(response.statusCode ?? null, error.message));
      },
    );
    req.on('error', (error: Error) => done(null, error.name === 'AbortError' || error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : error.message));
    req.end(body);
  });
}
