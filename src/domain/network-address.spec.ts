import { isPublicAddress, urlFormProblem } from './network-address';

describe('postback and webhook addresses', () => {
  it('accepts public unicast IPv4 and IPv6', () => {
    for (const address of ['8.8.8.8', '200.160.2.3', '2606:4700:4700::1111']) expect({ address, ok: isPublicAddress(address) }).toEqual({ address, ok: true });
  });

  it('refuses loopback, private, link-local, CGNAT and every IPv6 form that carries an IPv4 address', () => {
    const refused = [
      '127.0.0.1',
      '10.0.0.1',
      '192.168.1.1',
      '172.16.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '::127.0.0.1',
      '::a00:1',
      '::808:808',
      '64:ff9b::7f00:1',
      'not-an-ip',
    ];
    for (const address of refused) expect({ address, ok: isPublicAddress(address) }).toEqual({ address, ok: false });
  });

  it('refuses URLs with a user name or password', () => {
    expect(urlFormProblem(new URL('https://user:secret@example.com/hook'))).toMatch(/user name or password/);
    expect(urlFormProblem(new URL('https://user@example.com/hook'))).toMatch(/user name or password/);
    expect(urlFormProblem(new URL('https://example.com/hook'))).toBeNull();
  });
});
