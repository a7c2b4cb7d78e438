import { DomainError, RequestValidationError } from './domain-error';
import { checkPaymentPermission, checkSaleRules, installmentsOf, SaleRequest, withoutCardSecrets } from './sale-request';

const card = { number: '4111111111111111', holderName: 'JOAO', expirationMonth: '12', expirationYear: '2035', cvv: '123' };
const base: SaleRequest = { amount: 10000, paymentMethod: 'CREDIT_CARD', card };
const codeOf = (run: () => void): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    return (error as DomainError).code;
  }
};

describe('sale request rules', () => {
  it('accepts a valid card sale and reads installments from either field', () => {
    expect(codeOf(() => checkSaleRules(base))).toBeNull();
    expect(installmentsOf({ ...base, installments: { number: 3 } })).toBe(3);
    expect(installmentsOf({ ...base, card: { ...card, installments: 4 } })).toBe(4);
    expect(installmentsOf(base)).toBe(1);
  });

  it('refuses installments on anything but a credit card, disagreeing aliases and an expired card, as field errors', () => {
    const fields = (request: SaleRequest) => {
      try {
        checkSaleRules(request, new Date('2026-11-23T00:00:00Z'));
        return [];
      } catch (error) {
        return (error as RequestValidationError).fieldErrors.map((e) => e.field);
      }
    };
    expect(fields({ amount: 10000, paymentMethod: 'PIX', installments: { number: 2 } })).toEqual(['installments.number']);
    expect(fields({ ...base, installments: { number: 2 }, card: { ...card, installments: 3 } })).toEqual(['card.installments']);
    expect(fields({ ...base, card: { ...card, expirationYear: '2026', expirationMonth: '10' } })).toEqual(['card.expirationYear']);
    expect(fields({ ...base, card: { ...card, expirationYear: '2026', expirationMonth: '11' } })).toEqual([]);
    expect(fields({ amount: 10000, paymentMethod: 'BOLETO', subscription: { enabled: false } })).toEqual(['paymentMethod']);
  });

  it('a debit sale must carry an authenticated 3-D Secure result for a brand 3-D Secure runs for (issue 39); credit need not', () => {
    const errors = (request: SaleRequest) => {
      try {
        checkSaleRules(request);
        return [];
      } catch (error) {
        return (error as RequestValidationError).fieldErrors.map((e) => `${e.field}: ${e.message}`);
      }
    };
    const authenticated = { cavv: 'AAABB2gHA1B5EFNjWQcDAAAAAAA=', eci: '05', version: '2', referenceId: 'ref-1' };
    const debit: SaleRequest = { amount: 10000, paymentMethod: 'DEBIT_CARD', card };
    expect(errors(debit)).toEqual([expect.stringMatching(/^card\.threeDSecure: DEBIT_CARD sales must be authenticated by 3-D Secure/)]);
    expect(errors({ ...debit, card: { ...card, threeDSecure: authenticated } })).toEqual([]);
    expect(errors({ ...debit, card: { ...card, threeDSecure: { ...authenticated, eci: '6' } } })).toEqual([]);
    expect(errors({ ...debit, card: { ...card, threeDSecure: { ...authenticated, eci: '07' } } })).toEqual([
      'card.threeDSecure.eci: ECI 07 means the VISA cardholder was not authenticated (DATA_ONLY): a debit sale needs an authenticated cardholder',
    ]);
    // Mastercard's ECIs are 02 and 01: Visa's 05 is not an authentication there.
    const mastercard = { ...card, number: '5555555555554444' };
    expect(errors({ ...debit, card: { ...mastercard, threeDSecure: { ...authenticated, eci: '02' } } })).toEqual([]);
    expect(errors({ ...debit, card: { ...mastercard, threeDSecure: authenticated } })).toEqual([expect.stringMatching(/^card\.threeDSecure\.eci: ECI 05 means the MASTERCARD cardholder was not authenticated/)]);
    expect(errors({ ...debit, card: { ...card, number: '6062825624254001', threeDSecure: authenticated } })).toEqual([expect.stringMatching(/^card\.threeDSecure: 3-D Secure is not offered for HIPERCARD/)]);
    expect(errors({ ...base, card: { ...card, threeDSecure: { ...authenticated, eci: '07' } } })).toEqual([]);
  });

  it('answers MINIMUM_AMOUNT under 100 cents', () => {
    expect(codeOf(() => checkSaleRules({ ...base, amount: 99 }))).toBe('MINIMUM_AMOUNT');
    expect(codeOf(() => checkSaleRules({ ...base, amount: 100 }))).toBeNull();
  });

  it('refuses a method the seller may not take, and always allows TRANSFER', () => {
    const none = { isCreditCardAvailable: false, isBoletoAvailable: false, isPixAvailable: false };
    for (const method of ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO'] as const) {
      expect(codeOf(() => checkPaymentPermission(method, none))).toBe('FORBIDDEN');
    }
    expect(codeOf(() => checkPaymentPermission('TRANSFER', none))).toBeNull();
  });

  it('keeps neither the card number nor the CVV in the fingerprinted request, only the last four digits', () => {
    const seen = JSON.stringify(withoutCardSecrets(base));
    expect(seen).not.toContain('4111111111111111');
    expect(seen).not.toContain('cvv');
    expect(withoutCardSecrets(base).card).toEqual({ holderName: 'JOAO', expirationMonth: '12', expirationYear: '2035', lastFour: '1111' });
    expect(withoutCardSecrets({ amount: 100, paymentMethod: 'PIX' })).toEqual({ amount: 100, paymentMethod: 'PIX' });
  });
});
