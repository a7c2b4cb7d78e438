import { addDays, addDaysToDate, brazilDate, endOfBrazilDay } from './dates';
import type { BillingCycle } from './subscription-billing';

/**
 * Pix Automático (issue 22): what the gateway decides about a subscription's authorization and its
 * renewals collected by the PSP, independent of any adapter.
 */

/** The recurrence's period (the BCB's periodicidade) for each billing cycle; BIWEEKLY has none. */
export const AUTOMATIC_PIX_PERIODS: Partial<Record<BillingCycle, 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL'>> = {
  WEEKLY: 'SEMANAL',
  MONTHLY: 'MENSAL',
  QUARTERLY: 'TRIMESTRAL',
  SEMIANNUAL: 'SEMESTRAL',
  YEARLY: 'ANUAL',
};

/** Where a subscription's authorization stands. */
export const AUTOMATIC_PIX_STATUSES = ['PENDING', 'AUTHORIZED', 'REJECTED', 'EXPIRED', 'CANCELLED'] as const;
export type AutomaticPixStatus = (typeof AUTOMATIC_PIX_STATUSES)[number];
export type AutomaticPixJourney = 'JOURNEY_2' | 'JOURNEY_3';

/**
 * Days before its due date a renewal is sent to the PSP as a recurring charge. The BCB takes a
 * recurring charge from 10 to 2 days before its due date; 4 leaves two passes of a day each for a
 * charge the PSP could not take at once, and fits inside a weekly cycle.
 */
export const AUTOMATIC_PIX_LEAD_DAYS = 4;
/** The last day before the due date a recurring charge may still be sent (the BCB's 2 days). */
export const AUTOMATIC_PIX_LAST_SEND_DAYS = 2;
/**
 * Retries after a failed attempt (PERMITE_3R_7D: at most 3, within 7 days of the due date): days after
 * the due date each settles on. They match the card dunning schedule (platform.md §7).
 */
export const AUTOMATIC_PIX_RETRY_DAYS = [1, 3, 5] as const;
/** PERMITE_3R_7D: a retry settles at most this many days after the charge's due date. */
export const AUTOMATIC_PIX_RETRY_WINDOW_DAYS = 7;
/** A renewal sale collected by the PSP expires this long after its due date (the retries' window and a day). */
export const AUTOMATIC_PIX_SALE_DAYS = 8;

/** The journey a sale asks for: a composite QR that pays the first charge too (3), or one that only authorizes when the first charge waits for the trial's end (2). */
export function journeyFor(trialDays: number): AutomaticPixJourney {
  return trialDays > 0 ? 'JOURNEY_2' : 'JOURNEY_3';
}

/** When the billing job sends the renewal due at `nextBillingDate` (the lead before it). */
export function automaticRenewalSendAt(nextBillingDate: Date): Date {
  return addDays(nextBillingDate, -AUTOMATIC_PIX_LEAD_DAYS);
}

/** The due date (YYYY-MM-DD, Brasília) of a renewal due at `at`, and when its sale expires. */
export function automaticChargeDates(at: Date): { dueDate: string; expiresAt: Date } {
  const dueDate = brazilDate(at);
  return { dueDate, expiresAt: addDays(endOfBrazilDay(dueDate), AUTOMATIC_PIX_SALE_DAYS) };
}

/** Whether a recurring charge due on `dueDate` can still be sent at `now` (at least 2 days before). */
export function canStillSend(dueDate: string, now: Date): boolean {
  return brazilDate(addDays(now, AUTOMATIC_PIX_LAST_SEND_DAYS)) <= dueDate;
}

/**
 * The settlement date of the retry to ask after `retriesAsked` retries of a charge due on `dueDate`, at
 * `now`: the next day of the schedule that is still in the future; null when none is left. The schedule
 * counts from the first attempt's settlement date, which is the due date on a business day and the
 * next business day otherwise (the PSP's ajusteDiaUtil): counted from a Sunday due date, the first
 * retry would fall on the Monday of the failed attempt itself. No retry settles later than
 * AUTOMATIC_PIX_RETRY_WINDOW_DAYS after the due date.
 */
export function nextRetryDate(dueDate: string, retriesAsked: number, now: Date, firstAttemptDate: string = dueDate): string | null {
  const today = brazilDate(now);
  const last = addDaysToDate(dueDate, AUTOMATIC_PIX_RETRY_WINDOW_DAYS);
  const from = firstAttemptDate > dueDate ? firstAttemptDate : dueDate;
  for (const days of AUTOMATIC_PIX_RETRY_DAYS.slice(retriesAsked)) {
    const date = addDaysToDate(from, days);
    if (date > last) return null;
    if (date > today) return date;
  }
  return null;
}

/** The authorization's state as the PSP reports it, mapped to ours (null: still waiting for the payer). */
export function authorizationOutcome(status: 'CRIADA' | 'APROVADA' | 'REJEITADA' | 'EXPIRADA' | 'CANCELADA'): AutomaticPixStatus | null {
  switch (status) {
    case 'CRIADA':
      return null;
    case 'APROVADA':
      return 'AUTHORIZED';
    case 'REJEITADA':
      return 'REJECTED';
    case 'EXPIRADA':
      return 'EXPIRED';
    case 'CANCELADA':
      return 'CANCELLED';
  }
}

/** Renewals are collected by the PSP only while the authorization holds; otherwise a QR per cycle, as plain PIX. */
export function collectsAutomatically(status: AutomaticPixStatus | null): boolean {
  return status === 'AUTHORIZED';
}
