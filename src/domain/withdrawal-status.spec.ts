import { InvalidTransitionError } from './domain-error';
import { announcedWithdrawalStatus, nextWithdrawalStatus, WITHDRAWAL_EVENTS, WITHDRAWAL_STATUSES } from './withdrawal-status';

const ALLOWED: Record<string, string> = {
  'PENDING PROCESSING': 'PROCESSING',
  'PENDING CANCELLED': 'CANCELLED',
  'PENDING REJECTED': 'FAILED',
  'PROCESSING COMPLETED': 'COMPLETED',
  'PROCESSING REJECTED': 'FAILED',
};

describe('withdrawal status machine (platform.md §7)', () => {
  for (const from of WITHDRAWAL_STATUSES) {
    for (const event of WITHDRAWAL_EVENTS) {
      const to = ALLOWED[`${from} ${event}`];
      it(`${from} on ${event} → ${to ?? 'refused'}`, () => {
        if (to) expect(nextWithdrawalStatus(from, event)).toBe(to);
        else expect(() => nextWithdrawalStatus(from, event)).toThrow(InvalidTransitionError);
      });
    }
  }

  it('announces FAILED as REJECTED', () => {
    expect(announcedWithdrawalStatus('FAILED')).toBe('REJECTED');
    expect(announcedWithdrawalStatus('COMPLETED')).toBe('COMPLETED');
  });
});
