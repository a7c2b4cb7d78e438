import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress, urlFormProblem } from '../domain/network-address';

/** Why a notification URL is refused, or null when it may be called. */
export type UrlRefusal = string | null;

export { isPublicAddress } from '../domain/network-address';

export interface ResolvedUrl {
  url: URL;
  /** The addresses the host resolved to, all checked. */
  addresses: string[];
}

/**
 * Resolves the URL's host and checks every address (platform.md §5): http or https only; unless
 * private networks are allowed, each address must be public. DNS is asked again at each delivery,
 * and the delivery connects to the address checked here (no second lookup to rebind).
 */
export async function resolveNotificationUrl(raw: string, allowPrivate: boolean): Promise<ResolvedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefusedError('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefusedError('must be an http or https URL');
  const formProblem = urlFormProblem(url);
  if (formProblem) throw new UrlRefusedError(formProblem);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  if (!allowPrivate) {
    const blocked = addresses.find((address) => !isPublicAddress(address));
    if (blocked) throw new UrlRefusedError(`resolves to ${blocked}, a loopback, private or link-local address`);
  }
  return { url, addresses };
}

export class UrlRefusedError extends Error {}
