import { Column, Entity, PrimaryColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { Cents } from '../../domain/money';

/** A seller's cached balance, always equal to the sum of its ledger entries. */
@Entity({ name: 'balances' })
export class BalanceEntity {
  @PrimaryColumn({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ name: 'available_cents', type: 'bigint', transformer: centsTransformer })
  availableCents: Cents;

  @Column({ name: 'blocked_cents', type: 'bigint', transformer: centsTransformer })
  blockedCents: Cents;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
