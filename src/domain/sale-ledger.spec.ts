import { cents } from './money';
import { reserveReleaseEffect, saleLedgerEffect, SaleFunds } from './sale-ledger';

const funds: SaleFunds = { netAmountCents: cents(9562), reserveHeldCents: cents(956), chargebackFineCents: cents(1500) };
const sum = (effect: ReturnType<typeof saleLedgerEffect>, account?: 'AVAILABLE' | 'BLOCKED') =>
  (effect?.movements ?? []).filter((m) => !account || m.account === account).reduce((total, m) => total + m.amountCents, 0);

describe('sale ledger effects', () => {
  it('credits the net amount on payment, holding the reserve', () => {
    const effect = saleLedgerEffect('ACQUIRER_APPROVED', funds);
    expect(effect?.kind).toBe('SALE_PAID');
    expect(sum(effect, 'AVAILABLE')).toBe(8606);
    expect(sum(effect, 'BLOCKED')).toBe(956);
    expect(sum(saleLedgerEffect('PAYMENT_CONFIRMED', funds))).toBe(9562);
  });

  it('debits exactly the net amount on every reversal, never more', () => {
    for (const event of ['REFUNDED', 'CHARGEBACK_CONFIRMED'] as const) {
      const effect = saleLedgerEffect(event, funds);
      expect(sum(effect)).toBe(-9562);
      expect(sum(effect, 'BLOCKED')).toBe(-956);
    }
    const released = { ...funds, reserveHeldCents: cents(0) };
    expect(sum(saleLedgerEffect('REFUNDED', released), 'AVAILABLE')).toBe(-9562);
  });

  it('moves the MED amount to the reserve and back, or takes it from the reserve only', () => {
    const pix: SaleFunds = { netAmountCents: cents(9901), reserveHeldCents: cents(0), chargebackFineCents: cents(1500) };
    expect(saleLedgerEffect('MED_OPENED', pix)?.movements).toEqual([
      { account: 'AVAILABLE', amountCents: -9901 },
      { account: 'BLOCKED', amountCents: 9901 },
    ]);
    expect(sum(saleLedgerEffect('MED_WON', pix), 'AVAILABLE')).toBe(9901);
    expect(saleLedgerEffect('MED_LOST', pix)?.movements).toEqual([{ account: 'BLOCKED', amountCents: -9901 }]);
  });

  it('applies the chargeback fine to available, and nothing when a chargeback is reversed', () => {
    expect(saleLedgerEffect('CHARGEBACK_OPENED', funds)?.movements).toEqual([{ account: 'AVAILABLE', amountCents: -1500 }]);
    expect(saleLedgerEffect('CHARGEBACK_REVERSED', funds)).toBeNull();
  });

  it('touches no money on expiry, cancellation, failures and refusals', () => {
    for (const event of ['EXPIRED', 'CANCELLED', 'PROCESSING_FAILED', 'SENT_TO_ACQUIRER', 'ACQUIRER_REFUSED'] as const) {
      expect(saleLedgerEffect(event, funds)).toBeNull();
    }
  });

  it('releases a reserve from blocked to available', () => {
    expect(reserveReleaseEffect(cents(956)).movements).toEqual([
      { account: 'BLOCKED', amountCents: -956 },
      { account: 'AVAILABLE', amountCents: 956 },
    ]);
  });
});
