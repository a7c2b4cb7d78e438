import { addDays } from './dates';
import { FeeSchedule, saleFees } from './fees';
import { LedgerEffect } from './ledger';
import { Cents, cents } from './money';
import { fundsAfterRefunds } from './refund-ledger';
import { receivableOf, saleLedgerEffect } from './sale-ledger';
import { nextSaleStatus, SaleEvent, SalePaymentMethod, SaleStatus } from './sale-status';

/** Why a paid sale's money went back to the customer (the sale's reversal_reason). */
export type SaleReversalReason = 'REFUNDED' | 'CHARGEBACK_CONFIRMED' | 'MED_LOST';

const REVERSAL_REASONS: Partial<Record<SaleEvent, SaleReversalReason>> = {
  REFUNDED: 'REFUNDED',
  CHARGEBACK_CONFIRMED: 'CHARGEBACK_CONFIRMED',
  MED_LOST: 'MED_LOST',
};

/** What a move reads of the sale. */
export interface SaleMoveState {
  status: SaleStatus;
  paymentMethod: SalePaymentMethod;
  amountCents: Cents;
  systemFeeCents: Cents | null;
  netAmountCents: Cents | null;
  reserveAmountCents: Cents | null;
  reserveSettledAt: Date | null;
  /** Refunded of it so far (refunds asked for and not failed). */
  refundedCents: Cents;
}

/** The columns a move writes besides the status (named as the sale's properties). */
export interface SaleMoveColumns {
  systemFeeCents?: Cents;
  netAmountCents?: Cents;
  reserveAmountCents?: Cents;
  completedAt?: Date;
  reserveReleaseDueAt?: Date | null;
  reserveSettledAt?: Date | null;
  reversalReason?: SaleReversalReason;
}

export interface SaleMove {
  next: SaleStatus;
  columns: SaleMoveColumns;
  /** The balance effect, or null when the move touches no money. */
  effect: LedgerEffect | null;
}

/**
 * One move of a sale by `event` at `now` (pure): the next status from the table of spec 3.1 (or
 * InvalidTransitionError), the fees fixed by its first payment (platform.md §4: net credited, the card
 * reserve held until `cardReserveDays` later), the reserve marked settled by a reversal, and the balance
 * effect of domain/sale-ledger.ts on what refunds left of the sale (a sale refunded in full by its
 * refunds moves to ESTORNADO with only its held reserve going back to available). The money pipeline (src/payments/money-pipeline.ts) plans every move with it.
 */
export function planSaleMove(sale: SaleMoveState, event: SaleEvent, schedule: FeeSchedule, now: Date): SaleMove {
  const next = nextSaleStatus(sale.status, event, sale.paymentMethod);
  const columns: SaleMoveColumns = {};
  let netAmountCents = sale.netAmountCents ?? cents(0);
  let systemFeeCents = sale.systemFeeCents ?? cents(0);
  let reserveHeldCents: Cents = sale.reserveSettledAt === null ? (sale.reserveAmountCents ?? cents(0)) : cents(0);
  if (event === 'PAYMENT_CONFIRMED' || event === 'ACQUIRER_APPROVED') {
    const fees = saleFees(sale.amountCents, sale.paymentMethod, schedule);
    netAmountCents = fees.netAmountCents;
    systemFeeCents = fees.systemFeeCents;
    reserveHeldCents = fees.reserveAmountCents;
    Object.assign(columns, {
      systemFeeCents: fees.systemFeeCents,
      netAmountCents: fees.netAmountCents,
      reserveAmountCents: fees.reserveAmountCents,
      completedAt: now,
      reserveReleaseDueAt: fees.reserveAmountCents > 0 ? addDays(now, schedule.cardReserveDays) : null,
      reserveSettledAt: fees.reserveAmountCents > 0 ? null : now,
    });
  }
  const reversal = REVERSAL_REASONS[event];
  if (reversal) {
    columns.reversalReason = reversal;
    if (reserveHeldCents > 0) columns.reserveSettledAt = now;
  }
  const funds = {
    amountCents: sale.amountCents,
    systemFeeCents,
    netAmountCents,
    reserveHeldCents,
    chargebackFineCents: schedule.chargebackFineCents,
    receivable: receivableOf(sale.paymentMethod),
  };
  const effect = saleLedgerEffect(event, fundsAfterRefunds(funds, sale.refundedCents));
  return { next, columns, effect };
}

/** A sale written already moved: the columns and status it is written with, and the statuses it went through before. */
export interface SaleOpening {
  status: SaleStatus;
  columns: SaleMoveColumns;
  /** Its earlier statuses, oldest first (each a line of its status history before its current one). */
  history: SaleStatus[];
}

/**
 * A new sale (PENDENTE) moved at once by `events` as it is written (a card sale sent to the acquirer):
 * its moves by planSaleMove, so the status table of spec 3.1 applies; none of them may move money (a
 * sale's money moves only once it exists: such an event throws).
 */
export function planOpening(sale: Omit<SaleMoveState, 'status'>, events: SaleEvent[], schedule: FeeSchedule, now: Date): SaleOpening {
  let state: SaleMoveState = { ...sale, status: 'PENDENTE' };
  const opening: SaleOpening = { status: 'PENDENTE', columns: {}, history: [] };
  for (const event of events) {
    const move = planSaleMove(state, event, schedule, now);
    if (move.effect) throw new Error(`A sale cannot be opened by ${event}: it moves money`);
    opening.history.push(state.status);
    opening.columns = { ...opening.columns, ...move.columns };
    opening.status = move.next;
    state = { ...state, ...move.columns, status: move.next };
  }
  return opening;
}
