import { imbalanceOf, LedgerAccount } from './ledger';
import { cents } from './money';
import { withdrawalLedgerEffect, withdrawalRequestedEffect } from './withdrawal-ledger';
import { WITHDRAWAL_EVENTS, WITHDRAWAL_STATUSES } from './withdrawal-status';

// 150.00 asked, 3.67 of fee, 146.33 sent to the PIX key.
const funds = { amountCents: cents(15000), feeCents: cents(367), netAmountCents: cents(14633) };
const on = (effect: ReturnType<typeof withdrawalLedgerEffect>, account: LedgerAccount) =>
  (effect?.movements ?? []).filter((m) => m.account === account).reduce((sum, m) => sum + m.amountCents, 0);

describe('withdrawal ledger effects (double entry)', () => {
  it('holds the whole amount on request: available down, blocked up, total unchanged', () => {
    expect(withdrawalRequestedEffect(cents(15000))).toEqual({
      kind: 'WITHDRAWAL_REQUESTED',
      movements: [
        { account: 'AVAILABLE', amountCents: -15000 },
        { account: 'BLOCKED', amountCents: 15000 },
      ],
    });
  });

  it('balances every posting of every event from every status', () => {
    for (const event of WITHDRAWAL_EVENTS) {
      for (const from of WITHDRAWAL_STATUSES) {
        const effect = withdrawalLedgerEffect(event, funds, from);
        if (effect) expect(imbalanceOf(effect)).toBe(0);
      }
    }
  });

  it('sends the net amount from the PSP account into transit on PROCESSING, the seller still blocked', () => {
    const sent = withdrawalLedgerEffect('PROCESSING', funds, 'PENDING');
    expect(sent?.movements).toEqual([
      { account: 'PSP_HOLDINGS', amountCents: 14633 },
      { account: 'PAYOUT_IN_TRANSIT', amountCents: -14633 },
    ]);
    expect(on(sent, 'BLOCKED')).toBe(0);
  });

  it('on COMPLETED removes the blocked amount, ends the transit and earns the fee', () => {
    const completed = withdrawalLedgerEffect('COMPLETED', funds, 'PROCESSING');
    expect(completed?.movements).toEqual([
      { account: 'BLOCKED', amountCents: -15000 },
      { account: 'FEE_REVENUE', amountCents: 367 },
      { account: 'PAYOUT_IN_TRANSIT', amountCents: 14633 },
    ]);
  });

  it('returns the amount to available on REJECTED and CANCELLED, bringing a payout in transit back to the PSP account', () => {
    for (const event of ['REJECTED', 'CANCELLED'] as const) {
      const pending = withdrawalLedgerEffect(event, funds, 'PENDING');
      expect(pending?.kind).toBe('WITHDRAWAL_RETURNED');
      expect(on(pending, 'AVAILABLE')).toBe(15000);
      expect(on(pending, 'PAYOUT_IN_TRANSIT')).toBe(0);
    }
    const afterSending = withdrawalLedgerEffect('REJECTED', funds, 'PROCESSING');
    expect(on(afterSending, 'PAYOUT_IN_TRANSIT')).toBe(14633);
    expect(on(afterSending, 'PSP_HOLDINGS')).toBe(-14633);
  });
});
