import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { LedgerAccount, LedgerEntryKind, LedgerReferenceType } from '../../domain/ledger';
import { Cents } from '../../domain/money';

/** One movement of money on one of a seller's two accounts. Append-only (a trigger refuses UPDATE and DELETE). */
@Entity({ name: 'ledger_entries' })
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ type: 'varchar' })
  account: LedgerAccount;

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
