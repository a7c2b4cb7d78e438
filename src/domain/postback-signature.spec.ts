import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newPostbackSecret, postbackSignatureHeaders, signatureHeader, standardWebhooksKey, verifySignature } from './postback-signature';

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

  it('signs in both schemes with every secret given; the standardwebhooks library verifies with each, nothing else does', () => {
    const [current, previous, stranger] = [newPostbackSecret(), newPostbackSecret(), newPostbackSecret()];
    const t = Math.floor(Date.now() / 1000);
    const headers = postbackSignatureHeaders([current, previous], 'e1', body, t);
    expect(headers).toMatchObject({ 'X-Event-Id': 'e1', 'webhook-id': 'e1', 'webhook-timestamp': String(t) });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(stranger).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
    expect([current, previous, stranger].map((secret) => verifySignature(secret, body, headers['X-Signature'], t))).toEqual([true, true, false]);
  });

  it('reads a secret of the old base64url form as its 32 bytes, the form the libraries take once converted', () => {
    const bytes = Buffer.alloc(32, 0xfb);
    const legacy = `whsec_${bytes.toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    expect(standardWebhooksKey(legacy)).toEqual(bytes);
    expect(standardWebhooksKey(`whsec_${bytes.toString('base64')}`)).toEqual(bytes);
    const headers = postbackSignatureHeaders([legacy], 'e2', body, Math.floor(Date.now() / 1000));
    expect(new Webhook(`whsec_${Buffer.from(legacy.slice(6), 'base64url').toString('base64')}`).verify(body, headers)).toEqual(JSON.parse(body));
  });
});
