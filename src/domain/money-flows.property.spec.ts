import fc from 'fast-check';
import { DomainError } from './domain-error';
import { DEFAULT_FEE_SCHEDULE, saleFees } from './fees';
import { LedgerAccount, LedgerEffect } from './ledger';
import { cents } from './money';
import { receivableOf, reserveReleaseEffect, saleLedgerEffect } from './sale-ledger';
import { nextSaleStatus, SALE_EVENTS, SaleEvent, SalePaymentMethod, SaleStatus } from './sale-status';
import { nextSubscriptionStatus, SUBSCRIPTION_EVENTS, SUBSCRIPTION_TRANSITIONS } from './subscription-status';
import { withdrawalLedgerEffect, withdrawalRequestedEffect } from './withdrawal-ledger';
import { nextWithdrawalStatus, WITHDRAWAL_EVENTS, WithdrawalStatus } from './withdrawal-status';

/** A fixed seed, printed by fast-check on failure, so a failing case can be replayed. */
const RUNS = { seed: 20261123, numRuns: 400 };
const METHODS: SalePaymentMethod[] = ['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'];

interface Balance {
  available: number;
  blocked: number;
}
/** Every account's sum so far, across postings: the whole ledger must stay at zero after each one. */
type Accounts = Partial<Record<LedgerAccount, number>>;
let accounts: Accounts = {};
const apply = (balance: Balance, effect: LedgerEffect | null): Balance => {
  for (const m of effect?.movements ?? []) accounts[m.account] = (accounts[m.account] ?? 0) + m.amountCents;
  expect(Object.values(accounts).reduce((sum, amount) => sum + (amount ?? 0), 0)).toBe(0);
  return (effect?.movements ?? []).reduce(
    (b, m) => (m.account === 'AVAILABLE' ? { ...b, available: b.available + m.amountCents } : m.account === 'BLOCKED' ? { ...b, blocked: b.blocked + m.amountCents } : b),
    balance,
  );
};
beforeEach(() => {
  accounts = {};
});

describe('money flows over random event sequences (fast-check)', () => {
  it('a sale moves only by its table, blocked never goes negative, and what stays credited is the net while paid or disputed, nothing after a reversal, less the chargeback fines', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...METHODS),
        fc.integer({ min: 100, max: 10_000_000 }),
        fc.array(fc.constantFrom(...SALE_EVENTS), { maxLength: 30 }),
        fc.array(fc.boolean(), { maxLength: 30 }),
        (method, amount, events, releases) => {
          accounts = {};
          const fees = saleFees(cents(amount), method, DEFAULT_FEE_SCHEDULE);
          const receivable = receivableOf(method);
          let status = 'PENDENTE' as SaleStatus;
          let balance: Balance = { available: 0, blocked: 0 };
          let reserveHeld = 0;
          let fines = 0;
          let everPaid = false;
          events.forEach((event: SaleEvent, i) => {
            let next: SaleStatus;
            try {
              next = nextSaleStatus(status, event, method);
            } catch (error) {
              expect(error).toBeInstanceOf(DomainError);
              return;
            }
            const paid = event === 'PAYMENT_CONFIRMED' || event === 'ACQUIRER_APPROVED';
            if (paid) reserveHeld = fees.reserveAmountCents;
            if (paid) everPaid = true;
            const funds = {
              amountCents: cents(amount),
              systemFeeCents: fees.systemFeeCents,
              netAmountCents: fees.netAmountCents,
              reserveHeldCents: cents(reserveHeld),
              chargebackFineCents: DEFAULT_FEE_SCHEDULE.chargebackFineCents,
              receivable,
            };
            balance = apply(balance, saleLedgerEffect(event, funds));
            if (event === 'CHARGEBACK_OPENED') fines += DEFAULT_FEE_SCHEDULE.chargebackFineCents;
            if (event === 'REFUNDED' || event === 'CHARGEBACK_CONFIRMED') reserveHeld = 0;
            status = next;
            if (status === 'PAGO' && reserveHeld > 0 && releases[i]) {
              balance = apply(balance, reserveReleaseEffect(cents(reserveHeld)));
              reserveHeld = 0;
            }
            expect(balance.blocked).toBeGreaterThanOrEqual(0);
          });
          const credited = status === 'PAGO' || status === 'CHARGEBACK' || status === 'MED' ? fees.netAmountCents : 0;
          expect(balance.available + balance.blocked).toBe(credited - fines);
          // The provider owes the whole amount while the sale stands, nothing once it was reversed; the
          // platform earned the fee when paid, and lost it again (REVERSAL_COST) on a reversal.
          const stands = status === 'PAGO' || status === 'CHARGEBACK' || status === 'MED';
          expect((accounts[receivable] ?? 0) + 0).toBe(stands ? -amount : 0);
          expect((accounts.FEE_REVENUE ?? 0) + 0).toBe(everPaid ? fees.systemFeeCents : 0);
          expect(-(accounts.REVERSAL_COST ?? 0) + 0).toBe(everPaid && !stands ? fees.systemFeeCents : 0);
          expect(accounts.FINE_REVENUE ?? 0).toBe(fines);
        },
      ),
      RUNS,
    );
  });

  it('a withdrawal holds its amount while open, removes it once COMPLETED, returns it when rejected or cancelled; blocked never goes negative', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10_000, max: 10_000_000 }), fc.integer({ min: 0, max: 9_999 }), fc.array(fc.constantFrom(...WITHDRAWAL_EVENTS), { maxLength: 10 }), (amount, fee, events) => {
        accounts = {};
        let status: WithdrawalStatus = 'PENDING';
        let balance = apply({ available: amount, blocked: 0 }, withdrawalRequestedEffect(cents(amount)));
        const funds = { amountCents: cents(amount), feeCents: cents(fee), netAmountCents: cents(amount - fee) };
        for (const event of events) {
          const from = status;
          try {
            status = nextWithdrawalStatus(status, event);
          } catch {
            continue;
          }
          balance = apply(balance, withdrawalLedgerEffect(event, funds, from));
          expect(accounts.PAYOUT_IN_TRANSIT ?? 0).toBe(status === 'PROCESSING' ? -(amount - fee) : 0);
          expect(balance.blocked).toBeGreaterThanOrEqual(0);
          expect(balance.available).toBeGreaterThanOrEqual(0);
        }
        const expected: Record<WithdrawalStatus, Balance> = {
          PENDING: { available: 0, blocked: amount },
          PROCESSING: { available: 0, blocked: amount },
          COMPLETED: { available: 0, blocked: 0 },
          FAILED: { available: amount, blocked: 0 },
          CANCELLED: { available: amount, blocked: 0 },
        };
        expect(balance).toEqual(expected[status]);
        // Completed: the fee earned, the net paid out of the PSP account; otherwise neither.
        expect(accounts.FEE_REVENUE ?? 0).toBe(status === 'COMPLETED' ? fee : 0);
        expect(accounts.PSP_HOLDINGS ?? 0).toBe(status === 'COMPLETED' || status === 'PROCESSING' ? amount - fee : 0);
      }),
      RUNS,
    );
  });

  it('a subscription moves only by its table and never leaves CANCELLED or EXPIRED', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...SUBSCRIPTION_EVENTS), { maxLength: 40 }), (events) => {
        let status = 'PENDING' as keyof typeof SUBSCRIPTION_TRANSITIONS;
        let ended = false;
        for (const event of events) {
          let next: typeof status;
          try {
            next = nextSubscriptionStatus(status, event);
          } catch {
            continue;
          }
          expect(ended).toBe(false);
          expect(SUBSCRIPTION_TRANSITIONS[status][event]).toBe(next);
          status = next;
          ended = status === 'CANCELLED' || status === 'EXPIRED';
        }
      }),
      RUNS,
    );
  });
});
