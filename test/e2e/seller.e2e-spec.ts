import { createSeller } from './setup/factories';
import { startApp, TestApp } from './setup/test-app';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('GET /api/seller (spec 2.9) and GET /api/public/balance (spec 2.8)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('answers every field of the seller account with its documented type', async () => {
    const seller = await createSeller(t, {
      name: 'Loja Exemplo LTDA',
      commercialName: 'Loja Exemplo',
      phone: '11987654321',
      document: { type: 'cnpj', number: '11222333000181' },
    });
    const { body } = await t.http.get('/api/seller').set(seller.headers).expect(200);

    expect(body).toEqual({
      id: seller.id,
      userId: seller.id,
      legalName: 'Loja Exemplo LTDA',
      blocked: false,
      invoiceDescriptor: 'LOJA EXEMPLO',
      commercialName: 'Loja Exemplo',
      createdAt: expect.stringMatching(ISO_DATE),
      uploadedDocuments: false,
      user: {
        id: seller.id,
        email: expect.stringMatching(/@example\.com$/),
        phone: '11987654321',
        name: 'Loja Exemplo LTDA',
        isEmailVerified: false,
        isPhoneVerified: false,
        isAdmin: false,
        isMaster: false,
        createdAt: body.createdAt,
      },
      document: { id: seller.id, number: '11222333000181', type: 'cnpj' },
      permissions: {
        isCreditCardAvailable: true,
        isBoletoAvailable: true,
        isPixAvailable: true,
        transferEnabled: true,
        transferPriceCents: 200,
        anticipationEnabled: false,
        anticipatableVolumePercentage: 0,
        anticipationPricePercent: 0,
        minAnticipatableDays: 0,
      },
      details: {
        averageRevenue: 0,
        averageTicket: 0,
        physicalProducts: false,
        productsDescription: '',
        siteUrl: '',
        phone: '11987654321',
        email: body.user.email,
      },
      legalRepresentative: null,
      address: null,
      revenue: {
        totalAmount: 0,
        totalCount: 0,
        cardAmount: 0,
        cardCount: 0,
        pixAmount: 0,
        pixCount: 0,
        boletoAmount: 0,
        boletoCount: 0,
        chargebackAmount: 0,
        chargebackCount: 0,
        refundAmount: 0,
        refundCount: 0,
      },
      defaultRecipient: {
        id: seller.id,
        legalName: 'Loja Exemplo LTDA',
        document: { number: '11222333000181', type: 'cnpj' },
        transferSettings: {
          method: 'PIX',
          transferEnabled: true,
          automaticTransfer: false,
          feeFixedCents: 200,
          feePercent: 0,
          minimumAmount: '100.00',
          maximumAmount: '100000.00',
        },
        balance: { available: 0, updatedAt: expect.stringMatching(ISO_DATE) },
      },
    });
  });

  it('answers document null for a seller without one', async () => {
    const seller = await createSeller(t);
    const { body } = await t.http.get('/api/seller').set(seller.headers).expect(200);
    expect(body.document).toBeNull();
    expect(body.defaultRecipient.document).toEqual({ number: '', type: '' });
    expect(body.invoiceDescriptor).toBe('LOJA TESTE');
  });

  it('reflects permissions and cashout fee changes made by the operator', async () => {
    const seller = await createSeller(t, {
      permissions: { isBoletoAvailable: false, anticipationEnabled: true, anticipationPricePercent: 2.5 },
    });
    const { body } = await t.http.get('/api/seller').set(seller.headers).expect(200);
    expect(body.permissions).toMatchObject({ isBoletoAvailable: false, anticipationEnabled: true, anticipationPricePercent: 2.5 });
  });

  it('answers a zero balance as integers for a seller without a balances row, and a read writes nothing', async () => {
    const seller = await createSeller(t);
    await t.db.query('DELETE FROM balances WHERE seller_id = $1', [seller.id]);

    const { body } = await t.http.get('/api/public/balance').set(seller.headers).expect(200);

    expect(body).toEqual({ available: 0, blocked: 0, total: 0 });
    const rows = await t.db.query('SELECT available_cents, blocked_cents FROM balances WHERE seller_id = $1', [seller.id]);
    expect(rows).toEqual([]);
  });

  // Until sales exist the cached balance row is set by hand, and put back to zero so that it still
  // equals the sum of the seller's (absent) ledger entries.
  it('answers total = available + blocked, each seller only its own', async () => {
    const seller = await createSeller(t);
    const other = await createSeller(t);
    await t.db.query('UPDATE balances SET available_cents = 12345, blocked_cents = 655 WHERE seller_id = $1', [seller.id]);
    try {
      const { body } = await t.http.get('/api/public/balance').set(seller.headers).expect(200);
      expect(body).toEqual({ available: 12345, blocked: 655, total: 13000 });
      const account = await t.http.get('/api/seller').set(seller.headers).expect(200);
      expect(account.body.defaultRecipient.balance.available).toBe(12345);
      expect((await t.http.get('/api/public/balance').set(other.headers).expect(200)).body).toEqual({ available: 0, blocked: 0, total: 0 });
      expect((await t.http.get('/api/seller').set(other.headers).expect(200)).body.id).toBe(other.id);
    } finally {
      await t.db.query('UPDATE balances SET available_cents = 0, blocked_cents = 0 WHERE seller_id = $1', [seller.id]);
    }
  });
});
