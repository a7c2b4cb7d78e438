import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PayoutProvider, PayoutReceipt, PayoutRefusedError, PayoutRequest } from '../payout-provider.port';

interface PayoutRow {
  status: 'ACCEPTED' | 'CANCELLED';
  external_id: string;
}

/**
 * The sandbox payout provider: accepts every payout and records it by reference in its own table
 * (sandbox_payouts), so a reference is paid out at most once, whichever instance asks, and tests can
 * count the payouts. A cancelled reference stays cancelled: a later request for it is refused. Its
 * callbacks are the sandbox cashout events route.
 */
@Injectable()
export class SandboxPayoutProvider implements PayoutProvider {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async requestPayout(request: PayoutRequest): Promise<PayoutReceipt> {
    // One statement: the payout recorded, or the one recorded under this reference before. A row inserted
    // by a concurrent request of the same reference is outside this statement's snapshot; it is read again then.
    const [recorded]: PayoutRow[] = await this.dataSource.query(
      `WITH inserted AS (
         INSERT INTO sandbox_payouts (reference, status, net_amount_cents, pix_key_type, external_id) VALUES ($1, 'ACCEPTED', $2, $3, $4)
         ON CONFLICT (reference) DO NOTHING
         RETURNING status, external_id)
       SELECT status, external_id FROM inserted
       UNION ALL
       SELECT status, external_id FROM sandbox_payouts WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      [request.reference, request.netAmountCents, request.pixKeyType, `sbx_po_${request.reference}`],
    );
    const row = recorded ?? (await this.row(request.reference));
    if (row?.status !== 'ACCEPTED') throw new PayoutRefusedError(request.reference, 'the payout was cancelled');
    return { externalId: row.external_id };
  }

  async cancelPayout(reference: string): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO sandbox_payouts (reference, status, external_id) VALUES ($1, 'CANCELLED', $2)
       ON CONFLICT (reference) DO UPDATE SET status = 'CANCELLED'`,
      [reference, `sbx_po_${reference}`],
    );
  }

  private async row(reference: string): Promise<PayoutRow | null> {
    const [row]: PayoutRow[] = await this.dataSource.query(
      `SELECT status, external_id FROM sandbox_payouts WHERE reference = $1`,
      [reference],
    );
    return row ?? null;
  }
}
