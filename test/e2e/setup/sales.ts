import { TestSeller } from './factories';
import { TestApp } from './test-app';

export const customer = { name: 'João da Silva', email: 'joao@example.com', document: { type: 'cpf', number: '52998224725' }, phone: '11987654321' };
export const digitalItem = { title: 'Curso online', unitPrice: 10000, quantity: 1, tangible: false };
export const card = (number = '4111111111111111') => ({
  number,
  holderName: 'JOAO DA SILVA',
  expirationMonth: '12',
  expirationYear: '2035',
  cvv: '123',
});

/** What Cielo's BP.Mpi script answers for an authenticated Visa cardholder (the sandbox takes the same; docs/api.md). */
export const threeDSecure = (eci = '05') => ({ cavv: 'AAABB2gHA1B5EFNjWQcDAAAAAAA=', eci, version: '2', referenceId: 'a24a5d87-b1a1-4aef-a37b-2f30b91274e6' });

/** A valid sale body for each payment method; `overrides` replace top-level fields. */
export function saleBody(method: 'PIX' | 'CREDIT_CARD' | 'DEBIT_CARD' | 'BOLETO' | 'TRANSFER', overrides: Record<string, unknown> = {}) {
  const base: Record<string, unknown> = { amount: 10000, paymentMethod: method, customer, items: [digitalItem] };
  if (method === 'PIX') base.pix = {};
  if (method === 'BOLETO') base.boleto = {};
  if (method === 'CREDIT_CARD') base.card = card();
  if (method === 'DEBIT_CARD') base.card = { ...card(), threeDSecure: threeDSecure() };
  return { ...base, ...overrides };
}

export async function createSale(t: TestApp, seller: TestSeller, body: Record<string, unknown>) {
  const response = await t.http.post('/api/sales').set(seller.headers).send(body);
  if (response.status !== 201) throw new Error(`sale not created: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.sale as { id: number; status: string; [key: string]: unknown };
}

export async function sendEvent(t: TestApp, seller: TestSeller, saleId: number, event: string) {
  return t.http.post(`/api/sandbox/sales/${saleId}/events`).set(seller.headers).send({ event });
}

export async function balanceOf(t: TestApp, seller: TestSeller): Promise<{ available: number; blocked: number; total: number }> {
  return (await t.http.get('/api/public/balance').set(seller.headers).expect(200)).body;
}
