import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PayoutProvider, PayoutReceipt, PayoutRequest } from '../payout-provider.port';

/**
 * The sandbox payout provider: accepts every payout and records it by reference in its own table
 * (sandbox_payouts), so a reference is paid out at most once, whichever instance asks, and tests can
 * count the payouts. Its callbacks are the sandbox cashout events route.
 */
@Injectable()
export class SandboxPayoutProvider implements PayoutProvider {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async requestPayout(request: PayoutRequest): Promise<PayoutReceipt> {
    await this.dataSource.query(
      `INSERT INTO sandbox_payouts (reference, net_amount_cents, pix_key_type, external_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (reference) DO NOTHING`,
      [request.reference, request.netAmountCents, request.pixKeyType, `sbx_po_${request.reference}`],
    );
    return (await this.findPayout(request.reference)) as PayoutReceipt;
  }

  async findPayout(reference: string): Promise<PayoutReceipt | null> {
    const [row]: Array<{ external_id: string }> = await this.dataSource.query(`SELECT external_id FROM sandbox_payouts WHERE reference = $1`, [
      reference,
    ]);
    return row ? { externalId: row.external_id } : null;
  }
}
