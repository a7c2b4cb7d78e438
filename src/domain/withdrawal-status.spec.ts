import { InvalidTransitionError } from './domain-error';
import {
  announcedWithdrawalStatus,
  nextWithdrawalStatus,
  PAYOUT_STATES,
  PayoutState,
  WITHDRAWAL_EVENTS,
  WITHDRAWAL_STATUSES,
  withdrawalCatchUp,
  WithdrawalStatus,
} from './withdrawal-status';

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

  /** The withdrawal statuses that say the same as the provider's word on the payout (what is paid, what is not). */
  const AGREES: Record<PayoutState, readonly WithdrawalStatus[]> = {
    PENDING: ['PENDING', 'PROCESSING'],
    PROCESSING: ['PROCESSING'],
    COMPLETED: ['COMPLETED'],
    REJECTED: ['FAILED', 'CANCELLED'],
    CANCELLED: ['FAILED', 'CANCELLED'],
  };
  const FINAL: readonly WithdrawalStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

  for (const from of WITHDRAWAL_STATUSES) {
    for (const payout of PAYOUT_STATES) {
      const path = withdrawalCatchUp(from, payout);
      it(`catches a withdrawal ${from} up with a payout ${payout}: ${path ? `[${path.join(', ')}]` : 'disagreement'}`, () => {
        if (path === null) {
          // Only a final withdrawal can disagree: an open one always has a way to what the provider says.
          expect(FINAL).toContain(from);
          expect(AGREES[payout]).not.toContain(from);
          return;
        }
        // Every step is a move of the table, and the walk ends where the provider's word is.
        const end = path.reduce<WithdrawalStatus>((status, event) => nextWithdrawalStatus(status, event), from);
        expect(AGREES[payout]).toContain(end);
        if (AGREES[payout].includes(from)) expect(path).toEqual([]);
      });
    }
  }

  it('announces FAILED as REJECTED', () => {
    expect(announcedWithdrawalStatus('FAILED')).toBe('REJECTED');
    expect(announcedWithdrawalStatus('COMPLETED')).toBe('COMPLETED');
  });
});
