import ipaddr from 'ipaddr.js';

/**
 * Whether an address may receive a postback or webhook: public unicast only. Loopback, private,
 * link-local, CGNAT, multicast and reserved ranges are refused, and so are IPv6 forms that carry an
 * IPv4 address: IPv4-mapped (::ffff:a.b.c.d) is judged as that IPv4 address, and IPv4-compatible
 * (::a.b.c.d, deprecated by RFC 4291, e.g. [::7f00:1] for 127.0.0.1) and NAT64 (64:ff9b::/96) are
 * refused outright.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

/** Why a notification URL's form is refused (credentials in it), or null. */
export function urlFormProblem(url: URL): string | null {
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  return null;
}
