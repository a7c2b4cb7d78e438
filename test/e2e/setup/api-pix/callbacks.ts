import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One webhook callback the PSP made, and how the receiver answered (0: no answer, see `error`). */
export interface CallbackDelivery {
  url: string;
  status: number;
  body: unknown;
  error?: string;
}

/**
 * The PSP's TLS material: its CA and its certificate, which serves the API and, for an https webhook URL,
 * is presented as a client certificate (the document: the callback is protected by mTLS).
 */
export interface PspTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** A receiver that neither answers nor fails within this long counts as a failed delivery. */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * POSTs a JSON callback to `url` over http or https (by its scheme) and resolves with its status once the
 * answer has been read in full. It never rejects: a refused connection is a delivery with status 0.
 */
export function deliverCallback(url: string, body: unknown, tls: PspTls): Promise<CallbackDelivery> {
  const payload = JSON.stringify(body);
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const failed = (error: Error) => resolve({ url, status: 0, body, error: error.message });
    const outgoing = send(
      target,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
        timeout: DELIVERY_TIMEOUT_MS,
        ...(target.protocol === 'https:' ? tls : {}),
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ url, status: response.statusCode ?? 0, body }));
        response.on('error', failed);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${DELIVERY_TIMEOUT_MS} ms`)));
    outgoing.on('error', failed);
    outgoing.end(payload);
  });
}
