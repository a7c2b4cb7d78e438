import { CieloNotifications, notifiedPaymentId } from './cielo.notifications';

describe('Cielo notification post (ref §10)', () => {
  const id = 'B3C4D5E6-1111-4222-8333-944455566677';

  it('names the PaymentId (lower-cased) of {PaymentId, ChangeType, RecurrentPaymentId}, ChangeType a number or numeric string', () => {
    expect(notifiedPaymentId({ PaymentId: id, ChangeType: 1 })).toBe(id.toLowerCase());
    expect(notifiedPaymentId({ PaymentId: id, ChangeType: '2', RecurrentPaymentId: id })).toBe(id.toLowerCase());
    expect(notifiedPaymentId({ PaymentId: id, ChangeType: 1, RecurrentPaymentId: null })).toBe(id.toLowerCase());
  });

  it('is null for anything else', () => {
    for (const body of [null, [], 'x', { ChangeType: 1 }, { PaymentId: 'abc', ChangeType: 1 }, { PaymentId: id }, { PaymentId: id, ChangeType: 'one' }, { PaymentId: id, ChangeType: 1.5 }, { PaymentId: id, ChangeType: 1, RecurrentPaymentId: 'x' }]) {
      expect(notifiedPaymentId(body)).toBeNull();
    }
  });

  it('serves the URL’s path, masks its last segment, and checks the configured header in full', () => {
    const source = new CieloNotifications('https://gateway.example/cielo/abcdefghijklmnopqrstuvwx/', 1000, { name: 'X-Cielo-Secret', value: 's3cr3t' });
    expect(source.paths).toEqual([{ path: '/cielo/abcdefghijklmnopqrstuvwx', kind: 'card-payment' }]);
    expect(source.secret).toBe('abcdefghijklmnopqrstuvwx');
    expect(source.authentic({ 'x-cielo-secret': 's3cr3t' })).toBe(true);
    expect(source.authentic({ 'x-cielo-secret': 's3cr3' })).toBe(false);
    expect(source.authentic({})).toBe(false);
    expect(new CieloNotifications('https://gateway.example/cielo/abcdefghijklmnopqrstuvwx', 1000, null).authentic({})).toBe(true);
  });
});
