import fc from 'fast-check';
import { DomainError } from './domain-error';
import { DEFAULT_FEE_SCHEDULE, saleFees } from './fees';
import { LedgerEffect } from './ledger';
import { cents } from './money';
import { reserveReleaseEffect, saleLedgerEffect } from './sale-ledger';
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
const apply = (balance: Balance, effect: LedgerEffect | null): Balance =>
  (effect?.movements ?? []).reduce(
    (b, m) => (m.account === 'AVAILABLE' ? { ...b, available: b.available + m.amountCents } : { ...b, blocked: b.blocked + m.amountCents }),
    balance,
  );

describe('money flows over random event sequences (fast-check)', () => {
  it('a sale moves only by its table, blocked never goes negative, and what stays credited is the net while paid or disputed, nothing after a reversal, less the chargeback fines', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...METHODS),
        fc.integer({ min: 100, max: 10_000_000 }),
        fc.array(fc.constantFrom(...SALE_EVENTS), { maxLength: 30 }),
        fc.array(fc.boolean(), { maxLength: 30 }),
        (method, amount, events, releases) => {
          const fees = saleFees(cents(amount), method, DEFAULT_FEE_SCHEDULE);
          let status = 'PENDENTE' as SaleStatus;
          let balance: Balance = { available: 0, blocked: 0 };
          let reserveHeld = 0;
          let fines = 0;
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
            balance = apply(balance, saleLedgerEffect(event, { netAmountCents: fees.netAmountCents, reserveHeldCents: cents(reserveHeld), chargebackFineCents: DEFAULT_FEE_SCHEDULE.chargebackFineCents }));
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
        },
      ),
      RUNS,
    );
  });

  it('a withdrawal holds its amount while open, removes it once COMPLETED, returns it when rejected or cancelled; blocked never goes negative', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10_000, max: 10_000_000 }), fc.array(fc.constantFrom(...WITHDRAWAL_EVENTS), { maxLength: 10 }), (amount, events) => {
        let status: WithdrawalStatus = 'PENDING';
        let balance = apply({ available: amount, blocked: 0 }, withdrawalRequestedEffect(cents(amount)));
        for (const event of events) {
          try {
            status = nextWithdrawalStatus(status, event);
          } catch {
            continue;
          }
          balance = apply(balance, withdrawalLedgerEffect(event, cents(amount)));
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
