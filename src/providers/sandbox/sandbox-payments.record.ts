import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cents } from '../../domain/money';

/**
 * The sandbox's own record of the payments it plays through its events route (sandbox_payments): what
 * a PSP's record of a Pix is for a real sale, the evidence ledger:verify asks of a sandbox sale held as
 * paid. Written before the sale moves, as a provider's record exists before its notification.
 */
@Injectable()
export class SandboxPaymentsRecord {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The sandbox received `amountCents` for sale `saleId` (once: a second confirmation finds it there). */
  async record(saleId: number, amountCents: Cents): Promise<void> {
    await this.dataSource.query(`INSERT INTO sandbox_payments (sale_id, amount_cents) VALUES ($1, $2) ON CONFLICT (sale_id) DO NOTHING`, [saleId, amountCents]);
  }
}
