import { detectCardBrand, isLuhnValid } from './card';

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
});
