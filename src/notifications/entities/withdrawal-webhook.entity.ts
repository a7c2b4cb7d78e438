import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A permanent withdrawal webhook of a seller (spec 6.2). */
@Entity({ name: 'withdrawal_webhooks' })
export class WithdrawalWebhookEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ type: 'varchar' })
  url: string;

  @Column({ type: 'varchar' })
  type: 'WITHDRAWAL';

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
