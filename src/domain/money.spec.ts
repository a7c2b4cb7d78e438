import {
  basisPoints,
  basisPointsToPercent,
  brlInputToCents,
  centsToBrl,
  cents,
  centsToReaisNumber,
  centsToReaisString,
  percentageOf,
  percentToBasisPoints,
  reaisToCents,
} from './money';

describe('money', () => {
  it('refuses cents that are not safe integers', () => {
    expect(() => cents(1.5)).toThrow();
    expect(() => cents(Number.MAX_SAFE_INTEGER + 1)).toThrow();
    expect(cents(-3)).toBe(-3);
  });

  it.each([
    [150, 15000],
    [150.5, 15050],
    ['150.50', 15050],
    ['100', 10000],
    ['0.01', 1],
    [100000, 10000000],
    ['-2.5', -250],
  ])('reads %p reais as %p cents', (reais, expected) => {
    expect(reaisToCents(reais)).toBe(expected);
  });

  it.each([['1.005'], [1.005], ['abc'], [''], [NaN], [Infinity], [null], [undefined], [{}], ['1e3'], [0.1 + 0.2]])(
    'refuses %p',
    (value) => {
      expect(reaisToCents(value)).toBeNull();
    },
  );

  it('writes cents as reais', () => {
    expect(centsToReaisString(cents(15050))).toBe('150.50');
    expect(centsToReaisString(cents(5))).toBe('0.05');
    expect(centsToReaisString(cents(-5))).toBe('-0.05');
    expect(centsToReaisString(cents(0))).toBe('0.00');
    expect(centsToReaisNumber(cents(123456))).toBe(1234.56);
  });

  it('round-trips every amount from 0 to 100000.00 reais in steps', () => {
    for (let c = 0; c <= 10_000_000; c += 997) {
      expect(reaisToCents(centsToReaisString(cents(c)))).toBe(c);
    }
  });

  it('converts percentages and basis points', () => {
    expect(basisPointsToPercent(basisPoints(399))).toBe(3.99);
    expect(percentToBasisPoints(3.99)).toBe(399);
    expect(percentToBasisPoints(-1)).toBeNull();
  });

  it('rounds percentage fees half up to the cent', () => {
    expect(percentageOf(cents(1000), basisPoints(399))).toBe(40); // 39.9
    expect(percentageOf(cents(1000), basisPoints(395))).toBe(40); // 39.5
    expect(percentageOf(cents(1000), basisPoints(394))).toBe(39); // 39.4
    expect(percentageOf(cents(0), basisPoints(399))).toBe(0);
  });
});

describe('centsToBrl', () => {
  it('writes reais the Brazilian way, with thousands dots and a decimal comma', () => {
    expect(centsToBrl(cents(123456))).toBe('R$ 1.234,56');
    expect(centsToBrl(cents(5))).toBe('R$ 0,05');
    expect(centsToBrl(cents(100000000))).toBe('R$ 1.000.000,00');
    expect(centsToBrl(cents(-15050))).toBe('-R$ 150,50');
  });
});

describe('brlInputToCents', () => {
  it('reads what a person types in a pt-BR form', () => {
    expect(brlInputToCents('150')).toBe(15000);
    expect(brlInputToCents('150,5')).toBe(15050);
    expect(brlInputToCents('1.234,56')).toBe(123456);
    expect(brlInputToCents('R$ 150,50')).toBe(15050);
    expect(brlInputToCents('150.50')).toBe(15050);
    expect(brlInputToCents('150.505')).toBe(15050500); // dots between groups of three are thousands
  });

  it('refuses anything else instead of guessing', () => {
    for (const text of ['', 'abc', '1,234.56', '150,505', '1.23.4', '-150', '1.5000', '12.34,5x']) {
      expect(brlInputToCents(text)).toBeNull();
    }
    expect(brlInputToCents(150)).toBeNull();
  });
});
