import { BasisPoints, Cents, basisPoints, cents, percentageOf, subtractCents, addCents } from './money';

/**
 * A seller's fee schedule. Percentages are basis points (399 = 3.99 %), fixed parts are cents.
 * Rounding rule, the only one: a percentage part is rounded half up to the cent (money.percentageOf).
 */
export interface FeeSchedule {
  pixPercentBps: BasisPoints;
  pixFixedCents: Cents;
  creditCardPercentBps: BasisPoints;
  creditCardFixedCents: Cents;
  debitCardPercentBps: BasisPoints;
  debitCardFixedCents: Cents;
  boletoPercentBps: BasisPoints;
  boletoFixedCents: Cents;
  transferPercentBps: BasisPoints;
  transferFixedCents: Cents;
  /** Share of a paid card sale held in the blocked balance until `cardReserveDays` after payment. */
  cardReservePercentBps: BasisPoints;
  cardReserveDays: number;
  /** Pre-chargeback fine debited from available when a card sale enters CHARGEBACK. */
  chargebackFineCents: Cents;
  cashoutPercentBps: BasisPoints;
  cashoutFixedCents: Cents;
}

export type FeeScheduleKey = keyof FeeSchedule;

/** Defaults for every seller; the operator can override any of them per seller. Written in the README. */
export const DEFAULT_FEE_SCHEDULE: Readonly<FeeSchedule> = Object.freeze({
  pixPercentBps: basisPoints(99),
  pixFixedCents: cents(0),
  creditCardPercentBps: basisPoints(399),
  creditCardFixedCents: cents(39),
  debitCardPercentBps: basisPoints(199),
  debitCardFixedCents: cents(39),
  boletoPercentBps: basisPoints(0),
  boletoFixedCents: cents(349),
  transferPercentBps: basisPoints(99),
  transferFixedCents: cents(0),
  cardReservePercentBps: basisPoints(1000),
  cardReserveDays: 30,
  chargebackFineCents: cents(1500),
  cashoutPercentBps: basisPoints(0),
  cashoutFixedCents: cents(200),
});

export const FEE_SCHEDULE_KEYS = Object.keys(DEFAULT_FEE_SCHEDULE) as FeeScheduleKey[];

/** The seller's schedule: the defaults with the seller's overrides on top. */
export function feeScheduleWith(overrides: Partial<Record<FeeScheduleKey, number>> | null | undefined): FeeSchedule {
  const schedule: FeeSchedule = { ...DEFAULT_FEE_SCHEDULE };
  for (const key of FEE_SCHEDULE_KEYS) {
    const value = overrides?.[key];
    if (value === undefined || value === null) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`fee ${key} must be a non-negative integer`);
    }
    (schedule as unknown as Record<FeeScheduleKey, number>)[key] = value;
  }
  return schedule;
}

export type FeeMethod = 'PIX' | 'CREDIT_CARD' | 'DEBIT_CARD' | 'BOLETO' | 'TRANSFER';

export interface SaleFees {
  systemFeeCents: Cents;
  netAmountCents: Cents;
  reserveAmountCents: Cents;
}

/**
 * Fees of a paid sale: systemFee = percentage + fixed part of its method, capped at the amount so
 * that netAmount is never negative; amount = netAmount + systemFee always holds. Card sales hold a
 * reserve, a share of the net amount, in the blocked balance.
 */
export function saleFees(amount: Cents, method: FeeMethod, schedule: FeeSchedule): SaleFees {
  const [rate, fixed] = methodRates(method, schedule);
  const raw = addCents(percentageOf(amount, rate), fixed);
  const systemFeeCents = raw > amount ? amount : raw;
  const netAmountCents = subtractCents(amount, systemFeeCents);
  const isCard = method === 'CREDIT_CARD' || method === 'DEBIT_CARD';
  const reserveAmountCents = isCard ? percentageOf(netAmountCents, schedule.cardReservePercentBps) : cents(0);
  return { systemFeeCents, netAmountCents, reserveAmountCents };
}

export interface WithdrawalFees {
  fixedCents: Cents;
  variableCents: Cents;
  totalCents: Cents;
}

export function withdrawalFees(amount: Cents, schedule: FeeSchedule): WithdrawalFees {
  const fixedCents = schedule.cashoutFixedCents;
  const variableCents = percentageOf(amount, schedule.cashoutPercentBps);
  return { fixedCents, variableCents, totalCents: addCents(fixedCents, variableCents) };
}

function methodRates(method: FeeMethod, s: FeeSchedule): [BasisPoints, Cents] {
  const table: Record<FeeMethod, [BasisPoints, Cents]> = {
    PIX: [s.pixPercentBps, s.pixFixedCents],
    CREDIT_CARD: [s.creditCardPercentBps, s.creditCardFixedCents],
    DEBIT_CARD: [s.debitCardPercentBps, s.debitCardFixedCents],
    BOLETO: [s.boletoPercentBps, s.boletoFixedCents],
    TRANSFER: [s.transferPercentBps, s.transferFixedCents],
  };
  return table[method];
}
