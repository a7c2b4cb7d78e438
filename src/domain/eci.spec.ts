import { eciMeaning, isAuthenticatedEci, normalizeEci } from './eci';

describe('ECI meaning by brand (cielo-ecommerce-3.0.md §8.5)', () => {
  it('Mastercard: 02 issuer, 01 brand, 04 Data Only, anything else not authenticated', () => {
    expect(eciMeaning('MASTERCARD', '02')).toBe('AUTHENTICATED');
    expect(eciMeaning('MASTERCARD', '1')).toBe('ATTEMPTED');
    expect(eciMeaning('MASTERCARD', '04')).toBe('DATA_ONLY');
    expect(eciMeaning('MASTERCARD', '00')).toBe('NOT_AUTHENTICATED');
    expect(eciMeaning('MASTERCARD', '05')).toBe('NOT_AUTHENTICATED');
  });

  it('Visa: 05 issuer, 06 brand, 07 not authenticated (Data Only); Elo and Amex 05 and 06 only', () => {
    expect(eciMeaning('VISA', '5')).toBe('AUTHENTICATED');
    expect(eciMeaning('VISA', '06')).toBe('ATTEMPTED');
    expect(eciMeaning('VISA', '07')).toBe('DATA_ONLY');
    expect(eciMeaning('VISA', '02')).toBe('NOT_AUTHENTICATED');
    expect(eciMeaning('ELO', '05')).toBe('AUTHENTICATED');
    expect(eciMeaning('ELO', '07')).toBe('NOT_AUTHENTICATED');
    expect(eciMeaning('AMEX', '06')).toBe('ATTEMPTED');
  });

  it('only the issuer’s or the brand’s authentication counts; a brand without 3-D Secure has no meaning', () => {
    expect(isAuthenticatedEci('VISA', '05')).toBe(true);
    expect(isAuthenticatedEci('VISA', '06')).toBe(true);
    expect(isAuthenticatedEci('VISA', '07')).toBe(false);
    expect(isAuthenticatedEci('MASTERCARD', '04')).toBe(false);
    expect(eciMeaning('HIPERCARD', '05')).toBeNull();
    expect(isAuthenticatedEci(null, '05')).toBe(false);
    expect(normalizeEci('5')).toBe('05');
    expect(normalizeEci('x5')).toBeNull();
    expect(eciMeaning('VISA', 'abc')).toBe('NOT_AUTHENTICATED');
  });
});
