import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One try at delivering an outbox event. */
@Entity({ name: 'delivery_attempts' })
export class DeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'outbox_id', type: 'bigint' })
  outboxId: string;

  @Column({ name: 'attempted_at', type: 'timestamptz' })
  attemptedAt: Date;

  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  /** The headers the try sent (signatures, never a secret); null for tries recorded before they were kept. */
  @Column({ name: 'request_headers', type: 'jsonb', nullable: true })
  requestHeaders: Record<string, string> | null;
}
