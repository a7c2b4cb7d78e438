import fc from 'fast-check';
import { InvalidTransitionError } from './domain-error';
import { DEFAULT_FEE_SCHEDULE } from './fees';
import { assertBalanced, LedgerAccount, LedgerEffect } from './ledger';
import { Cents, cents } from './money';
import { refundFailedEffect, refundRequestedEffect, refundSettledEffect, RefundSplit, refundSplit } from './refund-ledger';
import { receivableOf, reserveReleaseEffect } from './sale-ledger';
import { planSaleMove, refundsCoverSale, SaleMoveState } from './sale-move';
import { isFinalSaleStatus, SaleEvent } from './sale-status';

/** A fixed seed, printed by fast-check on failure, so a failing case can be replayed. */
const RUNS = { seed: 20261127, numRuns: 600 };
const now = new Date('2026-11-27T12:00:00Z');
const DISPUTE_EVENTS: SaleEvent[] = ['MED_OPENED', 'MED_WON', 'MED_LOST', 'CHARGEBACK_OPENED', 'CHARGEBACK_REVERSED', 'CHARGEBACK_CONFIRMED', 'REFUNDED'];

interface Refund {
  amountCents: Cents;
  split: RefundSplit;
}

/** One sale of the seller as the services keep it: its row, its pending refunds, and the sum of its postings per account. */
interface ModelSale {
  state: SaleMoveState;
  pending: Refund[];
  /** Refunds that failed: each may leave one cent of rounding between the splits of the others (refundSplit runs on the running total). */
  failed: number;
  accounts: Partial<Record<LedgerAccount, number>>;
}

const sumOf = (sale: ModelSale, ...names: LedgerAccount[]) => names.reduce((sum, name) => sum + (sale.accounts[name] ?? 0), 0);

function post(sale: ModelSale, effects: LedgerEffect[]): void {
  for (const effect of effects) for (const m of assertBalanced(effect).movements) sale.accounts[m.account] = (sale.accounts[m.account] ?? 0) + m.amountCents;
}

/** A sale moved by `event` through the pipeline's one step (planSaleMove); false when the table refuses it. */
function move(sale: ModelSale, event: SaleEvent): boolean {
  let plan;
  try {
    plan = planSaleMove(sale.state, event, DEFAULT_FEE_SCHEDULE, now);
  } catch (error) {
    if (error instanceof InvalidTransitionError) return false;
    throw error;
  }
  post(sale, plan.effects);
  sale.state = { ...sale.state, ...plan.columns, status: plan.next };
  return true;
}

/** RefundsService.request: a PAGO sale, up to what is left (all of it when `amount` is absent). */
function requestRefund(sale: ModelSale, amount: number | null): void {
  const left = sale.state.amountCents - sale.state.refundedCents;
  if (sale.state.status !== 'PAGO' || left <= 0) return;
  const amountCents = cents(amount === null ? left : Math.min(left, amount));
  const split = refundSplit({ amountCents: sale.state.amountCents, netAmountCents: sale.state.netAmountCents ?? cents(0) }, sale.state.refundedCents, amountCents);
  post(sale, [refundRequestedEffect(split)]);
  sale.pending.push({ amountCents, split });
  sale.state = { ...sale.state, refundedCents: cents(sale.state.refundedCents + amountCents) };
}

/** RefundsService.finish: a pending refund completed or failed, whatever the sale's state. */
function finishRefund(sale: ModelSale, index: number, completed: boolean): void {
  if (sale.pending.length === 0) return;
  const [refund] = sale.pending.splice(index % sale.pending.length, 1);
  if (!completed) {
    post(sale, [refundFailedEffect(refund.split)]);
    sale.failed += 1;
    sale.state = { ...sale.state, refundedCents: cents(sale.state.refundedCents - refund.amountCents) };
    return;
  }
  post(sale, [refundSettledEffect(refund.amountCents, receivableOf(sale.state.paymentMethod))]);
  sale.state = { ...sale.state, refundCompletedCents: cents(sale.state.refundCompletedCents + refund.amountCents) };
  if (refundsCoverSale(sale.state, sale.state.refundCompletedCents)) expect(move(sale, 'REFUNDED')).toBe(true);
}

/** The reserve release job: a PAGO sale whose reserve is still held. */
function releaseReserve(sale: ModelSale): void {
  if (sale.state.status !== 'PAGO' || sale.state.reserveSettledAt !== null || !sale.state.reserveAmountCents) return;
  post(sale, [reserveReleaseEffect(sale.state.reserveAmountCents)]);
  sale.state = { ...sale.state, reserveSettledAt: now };
}

/**
 * What must hold of every sale after every step: its own hold never negative (so no other sale's hold
 * is ever consumed, and the seller's blocked never goes negative); its money conserved (what the payer
 * paid is what went back to the payer, is on its way back, stays with the seller, or is the platform's:
 * its postings sum to zero on every account group); the seller never keeps more than the net, nor loses
 * more than it was credited (fines aside, one cent of rounding per failed refund); the payer never gets
 * back more than it paid; a sale whose payer got (or is getting) everything back leaves the seller
 * nothing of it, and one whose payer got nothing back leaves it the net.
 */
function checkSale(sale: ModelSale): void {
  const { amountCents } = sale.state;
  const net = sale.state.netAmountCents ?? 0;
  const blocked = sumOf(sale, 'BLOCKED');
  const seller = sumOf(sale, 'AVAILABLE', 'BLOCKED') + sumOf(sale, 'FINE_REVENUE');
  const returned = amountCents + sumOf(sale, 'PSP_HOLDINGS', 'ACQUIRER_RECEIVABLE');
  const inTransit = sumOf(sale, 'REFUNDS_IN_TRANSIT');
  const platform = sumOf(sale, 'FEE_REVENUE', 'REVERSAL_COST');
  expect(blocked).toBeGreaterThanOrEqual(0);
  expect(seller + platform + returned + inTransit).toBe(amountCents);
  expect(returned).toBeGreaterThanOrEqual(0);
  expect(returned + inTransit).toBeLessThanOrEqual(amountCents);
  expect(seller).toBeGreaterThanOrEqual(-sale.failed);
  expect(seller).toBeLessThanOrEqual(net + sale.failed);
  if (returned + inTransit === amountCents) expect(Math.abs(seller)).toBeLessThanOrEqual(sale.failed);
  if (returned + inTransit === 0) expect(seller).toBe(net);
  // What a MED blocked is exactly what the sale holds in blocked while it is open (PIX holds no reserve).
  if (sale.state.status === 'MED') expect(blocked).toBe(sale.state.disputeNetCents);
}

const newSale = (method: 'PIX' | 'CREDIT_CARD', amount: number): ModelSale => {
  const sale: ModelSale = {
    state: {
      status: method === 'PIX' ? 'PENDENTE' : 'EM_PROCESSAMENTO',
      paymentMethod: method,
      amountCents: cents(amount),
      systemFeeCents: null,
      netAmountCents: null,
      reserveAmountCents: null,
      reserveSettledAt: null,
      refundedCents: cents(0),
      refundCompletedCents: cents(0),
      disputeAmountCents: null,
      disputeNetCents: null,
    },
    pending: [],
    failed: 0,
    accounts: {},
  };
  expect(move(sale, method === 'PIX' ? 'PAYMENT_CONFIRMED' : 'ACQUIRER_APPROVED')).toBe(true);
  return sale;
};

type Step =
  | { kind: 'event'; sale: number; event: SaleEvent }
  | { kind: 'refund'; sale: number; amount: number | null }
  | { kind: 'finish'; sale: number; index: number; completed: boolean }
  | { kind: 'release'; sale: number };

const stepArb = (sales: number): fc.Arbitrary<Step> => {
  const sale = fc.nat({ max: sales - 1 });
  return fc.oneof(
    fc.record({ kind: fc.constant('event' as const), sale, event: fc.constantFrom(...DISPUTE_EVENTS) }),
    fc.record({ kind: fc.constant('refund' as const), sale, amount: fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: null }) }),
    fc.record({ kind: fc.constant('finish' as const), sale, index: fc.nat({ max: 5 }), completed: fc.boolean() }),
    fc.record({ kind: fc.constant('release' as const), sale }),
  );
};

const scenario = fc
  .array(fc.record({ method: fc.constantFrom('PIX' as const, 'CREDIT_CARD' as const), amount: fc.integer({ min: 100, max: 200_000 }) }), { minLength: 1, maxLength: 4 })
  .chain((sales) =>
    fc.record({
      sales: fc.constant(sales),
      steps: fc.array(stepArb(sales.length), { maxLength: 40 }),
      // How each sale is brought to an end: its pending refunds' outcomes, its dispute won or lost.
      endings: fc.array(fc.record({ completed: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), won: fc.boolean() }), { minLength: sales.length, maxLength: sales.length }),
    }),
  );

describe('disputes and refunds interleaved (issue 35, fast-check)', () => {
  it('over random interleavings of refunds (asked, completed, failed, partial, full) and disputes on several sales: no hold goes negative or is taken from another sale, money is conserved, and every sale reaches a final state', () => {
    fc.assert(
      fc.property(scenario, ({ sales: specs, steps, endings }) => {
        const sales = specs.map(({ method, amount }) => newSale(method, amount));
        const sellerBlocked = () => sales.reduce((sum, sale) => sum + sumOf(sale, 'BLOCKED'), 0);
        for (const step of steps) {
          const sale = sales[step.sale];
          if (step.kind === 'event') move(sale, step.event);
          if (step.kind === 'refund') requestRefund(sale, step.amount);
          if (step.kind === 'finish') finishRefund(sale, step.index, step.completed);
          if (step.kind === 'release') releaseReserve(sale);
          sales.forEach(checkSale);
          expect(sellerBlocked()).toBeGreaterThanOrEqual(0);
        }
        // Every sale can end: its refunds settled, its dispute closed, what is left refunded in full.
        sales.forEach((sale, i) => {
          for (let j = 0; sale.pending.length > 0; j += 1) finishRefund(sale, 0, endings[i].completed[j % 8]);
          if (sale.state.status === 'MED') expect(move(sale, endings[i].won ? 'MED_WON' : 'MED_LOST')).toBe(true);
          if (sale.state.status === 'CHARGEBACK') expect(move(sale, endings[i].won ? 'CHARGEBACK_REVERSED' : 'CHARGEBACK_CONFIRMED')).toBe(true);
          checkSale(sale);
          if (sale.state.status === 'PAGO') {
            requestRefund(sale, null);
            finishRefund(sale, 0, true);
          }
          expect(sale.pending).toEqual([]);
          expect(isFinalSaleStatus(sale.state.status)).toBe(true);
          expect(sale.state.status).toBe('ESTORNADO');
          checkSale(sale);
          // Nothing of it stays held once it is final, and nothing is on its way.
          expect(sumOf(sale, 'BLOCKED')).toBe(0);
          expect(sumOf(sale, 'REFUNDS_IN_TRANSIT')).toBe(0);
        });
      }),
      RUNS,
    );
  });
});
