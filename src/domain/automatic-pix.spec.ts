import { AUTOMATIC_PIX_PERIODS, authorizationOutcome, automaticChargeDates, automaticRenewalSendAt, canStillSend, journeyFor, nextRetryDate } from './automatic-pix';
import { addCycle, dueBillingAction } from './subscription-billing';
import { DEFAULT_DUNNING } from './subscription-billing';

const at = (iso: string) => new Date(iso);

describe('Pix Automático rules', () => {
  it('maps every cycle but BIWEEKLY to the BCB period', () => {
    expect(AUTOMATIC_PIX_PERIODS).toEqual({ WEEKLY: 'SEMANAL', MONTHLY: 'MENSAL', QUARTERLY: 'TRIMESTRAL', SEMIANNUAL: 'SEMESTRAL', YEARLY: 'ANUAL' });
    expect(AUTOMATIC_PIX_PERIODS.BIWEEKLY).toBeUndefined();
  });

  it('asks journey 3 without a trial and journey 2 with one', () => {
    expect(journeyFor(0)).toBe('JOURNEY_3');
    expect(journeyFor(7)).toBe('JOURNEY_2');
  });

  it('sends a renewal 4 days before it is due, and no later than 2 days before (Brasília dates)', () => {
    expect(automaticRenewalSendAt(at('2027-01-20T13:00:00Z')).toISOString()).toBe('2027-01-16T13:00:00.000Z');
    expect(canStillSend('2027-01-20', at('2027-01-19T02:59:00Z'))).toBe(true); // the 18th, 23:59 in Brasília: 2 days before
    expect(canStillSend('2027-01-20', at('2027-01-19T03:00:00Z'))).toBe(false);
  });

  it('dates a charge by the Brazilian day and keeps its sale open through the retries', () => {
    expect(automaticChargeDates(at('2027-01-20T02:00:00Z'))).toEqual({ dueDate: '2027-01-19', expiresAt: at('2027-01-28T03:00:00Z') });
  });

  it('retries on days 1, 3 and 5 after the due date, skipping days already past, three at most', () => {
    const due = '2027-01-20';
    expect(nextRetryDate(due, 0, at('2027-01-20T15:00:00Z'))).toBe('2027-01-21');
    expect(nextRetryDate(due, 1, at('2027-01-21T15:00:00Z'))).toBe('2027-01-23');
    expect(nextRetryDate(due, 0, at('2027-01-22T15:00:00Z'))).toBe('2027-01-23');
    expect(nextRetryDate(due, 2, at('2027-01-23T15:00:00Z'))).toBe('2027-01-25');
    expect(nextRetryDate(due, 3, at('2027-01-20T15:00:00Z'))).toBeNull();
    expect(nextRetryDate(due, 0, at('2027-01-25T15:00:00Z'))).toBeNull();
  });

  it('counts the retries from the first attempt when a weekend moved it, never past 7 days after the due date', () => {
    // Due on Sunday 2026-12-27, first attempt settling on Monday the 28th (ajusteDiaUtil).
    const due = '2026-12-27';
    expect(nextRetryDate(due, 0, at('2026-12-27T15:00:00Z'), '2026-12-28')).toBe('2026-12-29');
    expect(nextRetryDate(due, 1, at('2026-12-28T15:00:00Z'), '2026-12-28')).toBe('2026-12-31');
    expect(nextRetryDate(due, 2, at('2026-12-30T15:00:00Z'), '2026-12-28')).toBe('2027-01-02');
    // A first attempt three days late (a long holiday): the third retry would settle on day 8, past the window.
    expect(nextRetryDate(due, 1, at('2026-12-30T15:00:00Z'), '2026-12-30')).toBe('2027-01-02');
    expect(nextRetryDate(due, 2, at('2027-01-02T15:00:00Z'), '2026-12-30')).toBeNull();
  });

  it('maps the recurrence statuses', () => {
    expect(['CRIADA', 'APROVADA', 'REJEITADA', 'EXPIRADA', 'CANCELADA'].map((s) => authorizationOutcome(s as never))).toEqual([null, 'AUTHORIZED', 'REJECTED', 'EXPIRED', 'CANCELLED']);
  });

  it('the billing job renews an authorized PIX subscription 4 days early, any other on its date', () => {
    const state = {
      status: 'ACTIVE' as const,
      paymentMethod: 'PIX' as const,
      nextBillingDate: at('2027-01-20T13:00:00Z'),
      scheduledCancellationDate: null,
      periodDueAt: null,
      nextRetryAt: null,
      pastDueSince: null,
      awaitingPaymentSince: null,
    };
    const early = at('2027-01-16T14:00:00Z');
    expect(dueBillingAction({ ...state, automaticPixStatus: 'AUTHORIZED' }, early, DEFAULT_DUNNING)).toEqual({ kind: 'RENEW' });
    expect(dueBillingAction({ ...state, automaticPixStatus: 'REJECTED' }, early, DEFAULT_DUNNING)).toBeNull();
    expect(dueBillingAction({ ...state, automaticPixStatus: null }, early, DEFAULT_DUNNING)).toBeNull();
    expect(dueBillingAction({ ...state, automaticPixStatus: 'AUTHORIZED' }, at('2027-01-16T12:00:00Z'), DEFAULT_DUNNING)).toBeNull();
  });
});

describe('calendar cycles of Pix Automático subscriptions', () => {
  it('steps by calendar months on the Brazilian calendar, to the last day of a shorter month', () => {
    expect(addCycle(at('2027-01-31T15:00:00Z'), 'MONTHLY', true).toISOString()).toBe('2027-02-28T15:00:00.000Z');
    expect(addCycle(at('2027-03-01T02:00:00Z'), 'MONTHLY', true).toISOString()).toBe('2027-03-29T02:00:00.000Z'); // 28 Feb, 23:00 in Brasília → 28 Mar, 23:00
    expect(addCycle(at('2027-11-30T12:00:00Z'), 'QUARTERLY', true).toISOString()).toBe('2028-02-29T12:00:00.000Z');
    expect(addCycle(at('2028-02-29T12:00:00Z'), 'YEARLY', true).toISOString()).toBe('2029-02-28T12:00:00.000Z');
    expect(addCycle(at('2027-01-31T15:00:00Z'), 'WEEKLY', true).toISOString()).toBe('2027-02-07T15:00:00.000Z');
    expect(addCycle(at('2027-01-31T15:00:00Z'), 'MONTHLY').toISOString()).toBe('2027-03-02T15:00:00.000Z');
  });

  it('never puts two charges in one calendar month over ten years of monthly renewals', () => {
    let due = at('2027-01-31T15:00:00Z');
    const months = new Set<string>();
    for (let n = 0; n < 120; n += 1) {
      const month = new Date(due.getTime() - 3 * 3_600_000).toISOString().slice(0, 7);
      expect(months.has(month)).toBe(false);
      months.add(month);
      due = addCycle(due, 'MONTHLY', true);
    }
  });
});
