import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { LedgerAccount, LedgerEntryKind, LedgerReferenceType } from '../../domain/ledger';
import { Cents } from '../../domain/money';

/** One side of a ledger posting: a signed amount on one account (domain/ledger.ts). Append-only (a trigger refuses UPDATE and DELETE). */
@Entity({ name: 'ledger_entries' })
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** The posting (ledger_postings) this entry is one side of; a posting's entries sum to zero. */
  @Column({ name: 'posting_id', type: 'bigint' })
  postingId: string;

  /** The seller the posting concerns (for the platform's and providers' entries too). */
  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ type: 'varchar' })
  account: LedgerAccount;

  /** The payment or payout provider of a provider account (ACQUIRER_RECEIVABLE, PSP_HOLDINGS, PAYOUT_IN_TRANSIT); null otherwise. */
  @Column({ type: 'varchar', nullable: true })
  provider: string | null;

  @Column({ name: 'amount_cents', type: 'bigint', transformer: centsTransformer })
  amountCents: Cents;

  @Column({ type: 'varchar' })
  kind: LedgerEntryKind;

  @Column({ name: 'reference_type', type: 'varchar' })
  referenceType: LedgerReferenceType;

  @Column({ name: 'reference_id', type: 'bigint' })
  referenceId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
