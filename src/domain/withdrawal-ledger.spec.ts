import { cents } from './money';
import { withdrawalLedgerEffect, withdrawalRequestedEffect } from './withdrawal-ledger';
import { WITHDRAWAL_EVENTS } from './withdrawal-status';

const total = (movements: Array<{ amountCents: number }> = []) => movements.reduce((sum, m) => sum + m.amountCents, 0);

describe('withdrawal ledger effects', () => {
  it('holds the whole amount on request: available down, blocked up, total unchanged', () => {
    expect(withdrawalRequestedEffect(cents(15000))).toEqual({
      kind: 'WITHDRAWAL_REQUESTED',
      movements: [
        { account: 'AVAILABLE', amountCents: -15000 },
        { account: 'BLOCKED', amountCents: 15000 },
      ],
    });
  });

  it('removes the blocked amount on COMPLETED, returns it to available on REJECTED and CANCELLED, and moves nothing on PROCESSING', () => {
    expect(withdrawalLedgerEffect('COMPLETED', cents(15000))?.movements).toEqual([{ account: 'BLOCKED', amountCents: -15000 }]);
    for (const event of ['REJECTED', 'CANCELLED'] as const) {
      const effect = withdrawalLedgerEffect(event, cents(15000));
      expect(effect?.kind).toBe('WITHDRAWAL_RETURNED');
      expect(effect?.movements.find((m) => m.account === 'AVAILABLE')?.amountCents).toBe(15000);
      expect(total(effect?.movements)).toBe(0);
    }
    expect(withdrawalLedgerEffect('PROCESSING', cents(15000))).toBeNull();
  });

  it('has an effect (or an explicit none) for every payout event, and every final one empties blocked of the amount', () => {
    for (const event of WITHDRAWAL_EVENTS) {
      const effect = withdrawalLedgerEffect(event, cents(10000));
      const blockedDelta = (effect?.movements ?? []).filter((m) => m.account === 'BLOCKED').reduce((sum, m) => sum + m.amountCents, 0);
      expect(blockedDelta).toBe(event === 'PROCESSING' ? 0 : -10000);
    }
  });
});
