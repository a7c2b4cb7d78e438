import { addDays } from './dates';
import { FeeSchedule, saleFees } from './fees';
import { LedgerEffect } from './ledger';
import { Cents, cents } from './money';
import { fundsAfterRefunds } from './refund-ledger';
import { receivableOf, SaleFunds, saleLedgerEffect } from './sale-ledger';
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
  /** What its completed refunds add up to (the payer has it back). */
  refundCompletedCents: Cents;
  /** While a dispute (MED, chargeback) is open: the gross it covers, fixed by its opening; null otherwise. */
  disputeAmountCents: Cents | null;
  /** While a dispute is open: the seller's net it covers, fixed by its opening (what a MED's opening moved to blocked); null otherwise. */
  disputeNetCents: Cents | null;
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
  disputeAmountCents?: Cents | null;
  disputeNetCents?: Cents | null;
}

export interface SaleMove {
  next: SaleStatus;
  columns: SaleMoveColumns;
  /** The balance effects, in order (none when the move touches no money). */
  effects: LedgerEffect[];
}

/**
 * What each event does to a sale's dispute (a MED or a chargeback): OPENS fixes what the dispute covers
 * (what refunds left of the sale then), WON and LOST close it on exactly that, whatever refunds did
 * meanwhile (a pending refund completing was already outside it; one failing gives its part back to
 * available, outside the dispute too). Keyed by every event.
 */
export type DisputeStep = 'NONE' | 'OPENS' | 'WON' | 'LOST';
export const DISPUTE_STEPS: Record<SaleEvent, DisputeStep> = {
  MED_OPENED: 'OPENS',
  CHARGEBACK_OPENED: 'OPENS',
  MED_WON: 'WON',
  CHARGEBACK_REVERSED: 'WON',
  MED_LOST: 'LOST',
  CHARGEBACK_CONFIRMED: 'LOST',
  SENT_TO_ACQUIRER: 'NONE',
  ACQUIRER_APPROVED: 'NONE',
  ACQUIRER_REFUSED: 'NONE',
  PAYMENT_CONFIRMED: 'NONE',
  EXPIRED: 'NONE',
  CANCELLED: 'NONE',
  PROCESSING_FAILED: 'NONE',
  REFUNDED: 'NONE',
};

/** The funds an open dispute covers, as its opening recorded them on the sale. */
function disputedFunds(funds: SaleFunds, sale: SaleMoveState): SaleFunds {
  if (sale.disputeAmountCents === null || sale.disputeNetCents === null) throw new Error(`A sale in ${sale.status} has no disputed amount recorded`);
  return { ...funds, amountCents: sale.disputeAmountCents, netAmountCents: sale.disputeNetCents, systemFeeCents: cents(sale.disputeAmountCents - sale.disputeNetCents) };
}

/**
 * One move of a sale by `event` at `now` (pure): the next status from the table of spec 3.1 (or
 * InvalidTransitionError), the fees fixed by its first payment (platform.md §4: net credited, the card
 * reserve held until `cardReserveDays` later), the reserve marked settled by a reversal, and the balance
 * effect of domain/sale-ledger.ts on what refunds left of the sale (a sale refunded in full by its
 * refunds moves to ESTORNADO with only its held reserve going back to available). A dispute's events use
 * what its opening covered (DISPUTE_STEPS). A dispute closed in the seller's favour on a sale its
 * completed refunds already cover moves on at once by REFUNDED (PAGO → ESTORNADO, the table's own
 * transition): such a sale has nothing left to be paid for. The money pipeline
 * (src/payments/money-pipeline.ts) plans every move with it.
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
  const step = DISPUTE_STEPS[event];
  const moved = step === 'WON' || step === 'LOST' ? disputedFunds(funds, sale) : fundsAfterRefunds(funds, sale.refundedCents);
  if (step === 'OPENS') Object.assign(columns, { disputeAmountCents: moved.amountCents, disputeNetCents: moved.netAmountCents });
  if (step === 'WON' || step === 'LOST') Object.assign(columns, { disputeAmountCents: null, disputeNetCents: null });
  const effect = saleLedgerEffect(event, moved);
  const move: SaleMove = { next, columns, effects: effect ? [effect] : [] };
  if (step !== 'WON' || !refundsCoverSale({ status: next, amountCents: sale.amountCents }, sale.refundCompletedCents)) return move;
  const refunded = planSaleMove({ ...sale, ...columns, status: next, disputeAmountCents: null, disputeNetCents: null }, 'REFUNDED', schedule, now);
  return { next: refunded.next, columns: { ...columns, ...refunded.columns }, effects: [...move.effects, ...refunded.effects] };
}

/**
 * Whether a sale moves on by REFUNDED (to ESTORNADO) once `refundCompletedCents` of it were refunded:
 * when it is PAGO and its completed refunds cover it. A sale in a dispute waits for the dispute's close
 * (planSaleMove applies the same rule then). One rule for a refund's completion and a dispute's close.
 */
export function refundsCoverSale(sale: Pick<SaleMoveState, 'status' | 'amountCents'>, refundCompletedCents: number): boolean {
  return sale.status === 'PAGO' && refundCompletedCents >= sale.amountCents;
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
    if (move.effects.length > 0) throw new Error(`A sale cannot be opened by ${event}: it moves money`);
    opening.history.push(state.status);
    opening.columns = { ...opening.columns, ...move.columns };
    opening.status = move.next;
    state = { ...state, ...move.columns, status: move.next };
  }
  return opening;
}
