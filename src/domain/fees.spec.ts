import { withdrawalFees, DEFAULT_FEE_SCHEDULE, feeScheduleWith, saleFees } from './fees';
import { cents } from './money';

describe('fees', () => {
  it('charges the default card fee and holds the reserve', () => {
    const fees = saleFees(cents(10000), 'CREDIT_CARD', DEFAULT_FEE_SCHEDULE);
    expect(fees.systemFeeCents).toBe(399 + 39);
    expect(fees.netAmountCents).toBe(10000 - 438);
    expect(fees.reserveAmountCents).toBe(956); // 10 % of 9562 = 956.2
  });

  it('keeps amount = netAmount + systemFee and never a negative net', () => {
    for (const method of ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'TRANSFER'] as const) {
      for (const amount of [1, 100, 349, 350, 12345, 99999999]) {
        const fees = saleFees(cents(amount), method, DEFAULT_FEE_SCHEDULE);
        expect(fees.netAmountCents + fees.systemFeeCents).toBe(amount);
        expect(fees.netAmountCents).toBeGreaterThanOrEqual(0);
        expect(fees.reserveAmountCents).toBeLessThanOrEqual(fees.netAmountCents);
      }
    }
  });

  it('holds no reserve outside cards', () => {
    expect(saleFees(cents(10000), 'PIX', DEFAULT_FEE_SCHEDULE).reserveAmountCents).toBe(0);
  });

  it('applies a seller override on top of the defaults', () => {
    const schedule = feeScheduleWith({ pixPercentBps: 0, pixFixedCents: 50 });
    expect(saleFees(cents(10000), 'PIX', schedule).systemFeeCents).toBe(50);
    expect(schedule.creditCardPercentBps).toBe(DEFAULT_FEE_SCHEDULE.creditCardPercentBps);
    expect(() => feeScheduleWith({ pixFixedCents: -1 })).toThrow(RangeError);
    expect(() => feeScheduleWith({ pixFixedCents: 1.5 })).toThrow(RangeError);
  });

  it('computes withdrawal fees', () => {
    expect(withdrawalFees(cents(15000), DEFAULT_FEE_SCHEDULE)).toEqual({ fixedCents: 200, variableCents: 0, totalCents: 200 });
    expect(withdrawalFees(cents(15000), feeScheduleWith({ cashoutPercentBps: 100 })).totalCents).toBe(350);
  });
});
