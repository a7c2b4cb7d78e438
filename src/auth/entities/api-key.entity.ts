import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One API key pair. The private key is kept only as its SHA-256 hash. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ name: 'public_key', type: 'varchar' })
  publicKey: string;

  @Column({ name: 'private_key_hash', type: 'char', length: 64 })
  privateKeyHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** When the pair last authenticated a request, to the minute (updated at most once a minute). */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
