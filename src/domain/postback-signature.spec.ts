import { createHmac } from 'node:crypto';
import { signatureHeader, verifySignature } from './postback-signature';

describe('postback signature', () => {
  const body = '{"id":"e1","type":"transaction.status_changed"}';

  it('is the hex HMAC-SHA256 of "<t>.<raw body>"', () => {
    const expected = createHmac('sha256', 'whsec_x').update(`1700000000.${body}`).digest('hex');
    expect(signatureHeader('whsec_x', body, 1700000000)).toBe(`t=1700000000,v1=${expected}`);
  });

  it('verifies what it signed, and refuses another body, another secret or an old timestamp', () => {
    const header = signatureHeader('whsec_x', body, 1700000000);
    expect(verifySignature('whsec_x', body, header, 1700000010)).toBe(true);
    expect(verifySignature('whsec_x', `${body} `, header, 1700000010)).toBe(false);
    expect(verifySignature('whsec_y', body, header, 1700000010)).toBe(false);
    expect(verifySignature('whsec_x', body, header, 1700001000)).toBe(false);
    expect(verifySignature('whsec_x', body, 'garbage', 1700000010)).toBe(false);
  });
});
