import { imbalanceOf, LedgerAccount } from './ledger';
import { cents } from './money';
import { receivableOf, reserveReleaseEffect, saleLedgerEffect, SaleFunds } from './sale-ledger';
import { SALE_EVENTS } from './sale-status';

// A card sale of 100.00: 4.38 of fees, 95.62 net, 9.56 of it held in the reserve.
const funds: SaleFunds = {
  amountCents: cents(10000),
  systemFeeCents: cents(438),
  netAmountCents: cents(9562),
  reserveHeldCents: cents(956),
  chargebackFineCents: cents(1500),
  receivable: 'ACQUIRER_RECEIVABLE',
};
const sum = (effect: ReturnType<typeof saleLedgerEffect>, ...accounts: LedgerAccount[]) =>
  (effect?.movements ?? []).filter((m) => accounts.length === 0 || accounts.includes(m.account)).reduce((total, m) => total + m.amountCents, 0);

describe('sale ledger effects (double entry)', () => {
  it('balances every posting of every event: its movements sum to zero', () => {
    for (const event of SALE_EVENTS) {
      const effect = saleLedgerEffect(event, funds);
      if (effect) expect(imbalanceOf(effect)).toBe(0);
    }
  });

  it('on payment credits the seller the net (the reserve held), the platform its fee, against what the acquirer owes', () => {
    const effect = saleLedgerEffect('ACQUIRER_APPROVED', funds);
    expect(effect?.kind).toBe('SALE_PAID');
    expect(effect?.movements).toEqual([
      { account: 'AVAILABLE', amountCents: 8606 },
      { account: 'BLOCKED', amountCents: 956 },
      { account: 'FEE_REVENUE', amountCents: 438 },
      { account: 'ACQUIRER_RECEIVABLE', amountCents: -10000 },
    ]);
    const pix = saleLedgerEffect('PAYMENT_CONFIRMED', { ...funds, reserveHeldCents: cents(0), receivable: receivableOf('PIX') });
    expect(sum(pix, 'PSP_HOLDINGS')).toBe(-10000);
  });

  it('debits the seller exactly the net on every reversal, the platform bears its fee, the provider gives the whole amount back', () => {
    for (const event of ['REFUNDED', 'CHARGEBACK_CONFIRMED'] as const) {
      const effect = saleLedgerEffect(event, funds);
      expect(sum(effect, 'AVAILABLE', 'BLOCKED')).toBe(-9562);
      expect(sum(effect, 'BLOCKED')).toBe(-956);
      expect(sum(effect, 'REVERSAL_COST')).toBe(-438);
      expect(sum(effect, 'ACQUIRER_RECEIVABLE')).toBe(10000);
    }
    const released = { ...funds, reserveHeldCents: cents(0) };
    expect(sum(saleLedgerEffect('REFUNDED', released), 'AVAILABLE')).toBe(-9562);
  });

  it('moves the MED amount to the reserve and back, or takes it from the reserve only while the PSP returns the payment', () => {
    const pix: SaleFunds = { ...funds, systemFeeCents: cents(99), netAmountCents: cents(9901), reserveHeldCents: cents(0), receivable: 'PSP_HOLDINGS' };
    expect(saleLedgerEffect('MED_OPENED', pix)?.movements).toEqual([
      { account: 'AVAILABLE', amountCents: -9901 },
      { account: 'BLOCKED', amountCents: 9901 },
    ]);
    expect(sum(saleLedgerEffect('MED_WON', pix), 'AVAILABLE')).toBe(9901);
    expect(saleLedgerEffect('MED_LOST', pix)?.movements).toEqual([
      { account: 'BLOCKED', amountCents: -9901 },
      { account: 'REVERSAL_COST', amountCents: -99 },
      { account: 'PSP_HOLDINGS', amountCents: 10000 },
    ]);
  });

  it('applies the chargeback fine to available as fine revenue, and nothing when a chargeback is reversed', () => {
    expect(saleLedgerEffect('CHARGEBACK_OPENED', funds)?.movements).toEqual([
      { account: 'AVAILABLE', amountCents: -1500 },
      { account: 'FINE_REVENUE', amountCents: 1500 },
    ]);
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
