import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The person who signs in to the dashboard for a seller (spec 2.9 user); one per seller. */
@Entity({ name: 'seller_users' })
export class SellerUserEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ type: 'varchar' })
  email: string;

  /** argon2id hash; null until the invitation is accepted. Never selected by default. */
  @Column({ name: 'password_hash', type: 'varchar', nullable: true, select: false })
  passwordHash: string | null;

  @Column({ name: 'password_changed_at', type: 'timestamptz', nullable: true })
  passwordChangedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
