import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { Cents } from '../../domain/money';
import { PixKeyType } from '../../domain/pix-key';
import { WithdrawalStatus } from '../../domain/withdrawal-status';

@Entity({ name: 'withdrawals' })
export class WithdrawalEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  /** Moved only through CashoutService (the table of domain/withdrawal-status.ts). */
  @Column({ type: 'varchar' })
  status: WithdrawalStatus;

  @Column({ name: 'amount_cents', type: 'bigint', transformer: centsTransformer })
  amountCents: Cents;

  @Column({ name: 'fee_fixed_cents', type: 'bigint', transformer: centsTransformer })
  feeFixedCents: Cents;

  @Column({ name: 'fee_variable_cents', type: 'bigint', transformer: centsTransformer })
  feeVariableCents: Cents;

  @Column({ name: 'fee_total_cents', type: 'bigint', transformer: centsTransformer })
  feeTotalCents: Cents;

  @Column({ name: 'net_amount_cents', type: 'bigint', transformer: centsTransformer })
  netAmountCents: Cents;

  /** The provider that pays it out (PAYOUT_PROVIDER when it was made), never rewritten. */
  @Column({ type: 'varchar' })
  provider: string;

  @Column({ name: 'pix_key', type: 'varchar' })
  pixKey: string;

  @Column({ name: 'pix_key_type', type: 'varchar' })
  pixKeyType: PixKeyType;

  @Column({ name: 'external_id', type: 'varchar', nullable: true })
  externalId: string | null;

  /** Why its payout failed, in the provider's words (FAILED withdrawals); null otherwise. */
  @Column({ name: 'failure_reason', type: 'varchar', nullable: true })
  failureReason: string | null;

  /** What its payout provider reported sending (a look-up's answer): the evidence ledger:verify compares with the net amount. */
  @Column({ name: 'provider_amount_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  providerAmountCents: Cents | null;

  /**
   * The provider's own id of its payout (Efí's idEnvio), fixed at the first attempt to send it: every later
   * attempt and look-up uses it, whatever the configuration says since. Null before the first attempt.
   */
  @Column({ name: 'provider_reference', type: 'varchar', nullable: true })
  providerReference: string | null;

  /** Attempts made to send its payout (each recorded before its call). */
  @Column({ name: 'payout_attempts', type: 'integer', default: 0 })
  payoutAttempts: number;

  /** When the last attempt to send its payout started (database clock); null before the first. */
  @Column({ name: 'last_payout_attempt_at', type: 'timestamptz', nullable: true })
  lastPayoutAttemptAt: Date | null;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
