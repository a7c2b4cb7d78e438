import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cents } from '../../domain/money';
import { PayoutState, WithdrawalEvent } from '../../domain/withdrawal-status';
import { PayoutProvider, PayoutReceipt, PayoutRefusedError, PayoutRequest, PayoutResult } from '../payout-provider.port';

/** The sandbox's record of a payout: taken (ACCEPTED), on its way, paid, rejected, or cancelled before it was sent on. */
type SandboxPayoutStatus = 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'REJECTED' | 'CANCELLED';

interface PayoutRow {
  status: SandboxPayoutStatus;
  external_id: string;
  reason: string | null;
}

const STATES: Record<SandboxPayoutStatus, PayoutState> = {
  ACCEPTED: 'PENDING',
  PROCESSING: 'PROCESSING',
  COMPLETED: 'COMPLETED',
  REJECTED: 'REJECTED',
  CANCELLED: 'CANCELLED',
};

/**
 * The sandbox's control of a payout's answer (like its test cards): a payout whose net amount (the
 * withdrawal's netAmount) has 17 cents — 148.17 — is paid at once, but the answer to every request for it
 * is lost (the call fails as a timeout would) and no callback comes: only a look-up (findPayout) tells.
 */
export const LOST_ANSWER_PAYOUT_CENTS = 17;

export function sandboxLosesPayoutAnswer(netAmountCents: Cents): boolean {
  return netAmountCents % 100 === LOST_ANSWER_PAYOUT_CENTS;
}

/** The answer of a request the sandbox took, lost on its way back (a timeout, a connection reset). */
export class SandboxPayoutAnswerLostError extends Error {
  constructor(readonly reference: string) {
    super(`Sandbox: payout ${reference} was taken, but its answer was lost (a net amount with ${LOST_ANSWER_PAYOUT_CENTS} cents)`);
    this.name = 'SandboxPayoutAnswerLostError';
  }
}

/** What each callback the sandbox's events route plays makes of its record: the record's status after, and the statuses it may come from. */
const CALLBACKS: Record<WithdrawalEvent, { to: SandboxPayoutStatus; from: readonly SandboxPayoutStatus[]; reason: string | null }> = {
  PROCESSING: { to: 'PROCESSING', from: ['ACCEPTED'], reason: null },
  COMPLETED: { to: 'COMPLETED', from: ['ACCEPTED', 'PROCESSING'], reason: null },
  // From CANCELLED too: a rejection of a payout the gateway had not recorded as sent cancels its reference first.
  REJECTED: { to: 'REJECTED', from: ['ACCEPTED', 'PROCESSING', 'CANCELLED'], reason: 'Rejected by the receiving bank (sandbox)' },
  CANCELLED: { to: 'CANCELLED', from: ['ACCEPTED', 'CANCELLED'], reason: 'Cancelled by the payout provider (sandbox)' },
};

const CANCELLED_REASON = CALLBACKS.CANCELLED.reason as string;

/**
 * The sandbox payout provider: takes every payout and records it by reference in its own table
 * (sandbox_payouts), so a reference is paid out at most once, whichever instance asks or retries, and
 * what it holds survives a restart (findPayout answers from it; tests count the payouts). A cancelled or
 * rejected reference stays so: a later request for it is refused. Its callbacks are the sandbox's withdrawal
 * events route, which moves this record first (recordCallback), as a provider's record moves before it
 * calls back.
 */
@Injectable()
export class SandboxPayoutProvider implements PayoutProvider {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async requestPayout(request: PayoutRequest): Promise<PayoutReceipt> {
    const lost = sandboxLosesPayoutAnswer(request.netAmountCents);
    // One statement: the payout recorded, or the one recorded under this reference before. A row inserted
    // by a concurrent request of the same reference is outside this statement's snapshot; it is read again then.
    const [recorded]: PayoutRow[] = await this.dataSource.query(
      `WITH inserted AS (
         INSERT INTO sandbox_payouts (reference, status, net_amount_cents, pix_key_type, external_id) VALUES ($1, $5, $2, $3, $4)
         ON CONFLICT (reference) DO NOTHING
         RETURNING status, external_id, reason)
       SELECT status, external_id, reason FROM inserted
       UNION ALL
       SELECT status, external_id, reason FROM sandbox_payouts WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      [request.reference, request.netAmountCents, request.pixKeyType, `sbx_po_${request.reference}`, lost ? 'COMPLETED' : 'ACCEPTED'],
    );
    const row = recorded ?? (await this.row(request.reference));
    if (!row || row.status === 'CANCELLED' || row.status === 'REJECTED') {
      throw new PayoutRefusedError(request.reference, row?.reason ?? 'the payout was cancelled');
    }
    if (lost) throw new SandboxPayoutAnswerLostError(request.reference);
    return { externalId: row.external_id, status: 'PENDING' };
  }

  async cancelPayout(reference: string): Promise<void> {
    // Only a payout not yet on its way: one processing or paid stays so.
    await this.dataSource.query(
      `INSERT INTO sandbox_payouts (reference, status, external_id, reason) VALUES ($1, 'CANCELLED', $2, $3)
       ON CONFLICT (reference) DO UPDATE SET status = 'CANCELLED', reason = EXCLUDED.reason WHERE sandbox_payouts.status = 'ACCEPTED'`,
      [reference, `sbx_po_${reference}`, CANCELLED_REASON],
    );
  }

  async findPayout(reference: string): Promise<PayoutResult | null> {
    const row = await this.row(reference);
    return row ? { status: STATES[row.status], externalId: row.external_id, reason: row.reason } : null;
  }

  /**
   * The sandbox's events route playing the provider: its record of the payout moved as the callback
   * `event` says, before the callback is applied to the withdrawal. False, with nothing changed, when the
   * record is not in a status that callback comes from (a payout paid at once cannot be processed,
   * rejected or cancelled; none recorded at all).
   */
  async recordCallback(reference: string, event: WithdrawalEvent): Promise<boolean> {
    const callback = CALLBACKS[event];
    const [, affected]: [unknown, number] = await this.dataSource.query(
      `UPDATE sandbox_payouts SET status = $2, reason = $3 WHERE reference = $1 AND status = ANY($4::varchar[])`,
      [reference, callback.to, callback.reason, callback.from],
    );
    return affected > 0;
  }

  private async row(reference: string): Promise<PayoutRow | null> {
    const [row]: PayoutRow[] = await this.dataSource.query(`SELECT status, external_id, reason FROM sandbox_payouts WHERE reference = $1`, [reference]);
    return row ?? null;
  }
}
