import creditCardType from 'credit-card-type';
import { BRAND_PREFIX_DIGITS, detectCardBrand, isLuhnValid } from './card';

describe('card', () => {
  it.each([
    ['4111111111111111', 'VISA'],
    ['5555555555554444', 'MASTERCARD'],
    ['6362970000457013', 'ELO'],
    ['4000000000000002', 'VISA'],
    ['4000000000000119', 'VISA'],
    ['4000000000000341', 'VISA'],
    ['378282246310005', 'AMEX'],
    ['6062825624254001', 'HIPERCARD'],
    ['2223003122003222', 'MASTERCARD'],
  ])('%s is a valid %s', (number, brand) => {
    expect(isLuhnValid(number)).toBe(true);
    expect(detectCardBrand(number)).toBe(brand);
  });

  it.each(['4111111111111112', '1234', '41111111111111111111', '4111-1111-1111-1111', ''])('refuses %p', (number) => {
    expect(isLuhnValid(number)).toBe(false);
  });

  it('answers null for a number of no known brand', () => {
    expect(detectCardBrand('9999999999999995')).toBeNull();
  });

  it("reads no more of a number than the library's longest pattern", () => {
    const lengths = Object.values(creditCardType.types).flatMap((type) =>
      (creditCardType.getTypeInfo(type)?.patterns ?? []).map((pattern) => String(Array.isArray(pattern) ? pattern[1] : pattern).length),
    );
    expect(Math.max(...lengths)).toBeLessThanOrEqual(BRAND_PREFIX_DIGITS);
  });

  it('answers what the library answers for the whole number, for numbers sharing a prefix too', () => {
    const names: Record<string, string> = { visa: 'VISA', mastercard: 'MASTERCARD', elo: 'ELO', 'american-express': 'AMEX', hipercard: 'HIPERCARD', hiper: 'HIPER', 'diners-club': 'DINERS', discover: 'DISCOVER', jcb: 'JCB', unionpay: 'UNIONPAY', maestro: 'MAESTRO', mir: 'MIR' };
    const library = (number: string): string | null => {
      const [match] = creditCardType(number);
      return match ? (names[match.type] ?? match.type.toUpperCase()) : null;
    };
    let seed = 7;
    const digits = (count: number) => {
      let out = '';
      for (let i = 0; i < count; i += 1) out += String((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 10);
      return out;
    };
    const starts = ['4', '5', '2', '34', '37', '36', '30', '6011', '65', '636368', '504175', '606282', '3841', '62', '35', '2200', '50', '67', '9'];
    const seen = new Set<string | null>();
    for (const start of starts) {
      for (let i = 0; i < 40; i += 1) {
        const prefix = start + digits(BRAND_PREFIX_DIGITS - start.length);
        for (const length of [13, 16, 19]) {
          const number = prefix + digits(length - BRAND_PREFIX_DIGITS);
          expect([number, detectCardBrand(number)]).toEqual([number, library(number)]);
          seen.add(library(number));
        }
      }
    }
    expect(seen.size).toBeGreaterThan(8); // the numbers reached most brands, and no brand at all
    expect(seen.has(null)).toBe(true);
  });
});
