import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type NotificationChannel = 'SALE_POSTBACK' | 'SUBSCRIPTION_POSTBACK' | 'WITHDRAWAL_WEBHOOK';
export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';
export type EventObjectType = 'sale' | 'subscription' | 'withdrawal';

/** One notification to deliver: written in the transaction of the change it announces. */
@Entity({ name: 'outbox_events' })
export class OutboxEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** Sent as X-Event-Id; receivers deduplicate on it. */
  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  @Column({ type: 'varchar' })
  channel: NotificationChannel;

  /** Events of one aggregate (one sale at one URL) are delivered one at a time, in order. */
  @Column({ name: 'aggregate_key', type: 'varchar' })
  aggregateKey: string;

  @Column({ type: 'varchar' })
  url: string;

  /** Postbacks carry X-Signature; withdrawal webhooks do not (spec 6.2). */
  @Column({ type: 'boolean' })
  signed: boolean;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  /** transaction.status_changed, refund.status_changed, subscription.status_changed, subscription.automatic_pix_changed or withdrawal.status_changed. */
  @Column({ name: 'event_type', type: 'varchar' })
  eventType: string;

  /** What the event is about: a sale (its refunds too), a subscription or a withdrawal. */
  @Column({ name: 'object_type', type: 'varchar', nullable: true })
  objectType: EventObjectType | null;

  @Column({ name: 'object_id', type: 'bigint', nullable: true, transformer: { to: (value: unknown) => value, from: (value: string | null) => (value === null ? null : Number(value)) } })
  objectId: number | null;

  /** The postback's place among its object's events (1, 2, …), in commit order; null for withdrawal webhooks. */
  @Column({ type: 'integer', nullable: true })
  sequence: number | null;

  @Column({ type: 'varchar' })
  status: DeliveryStatus;

  @Column({ type: 'integer' })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt: Date;

  /** The retry schedule counts from here: the first try, or the operator's redelivery. */
  @Column({ name: 'retry_base_at', type: 'timestamptz' })
  retryBaseAt: Date;

  /** A seller's redelivery of an event with no try left: this one try only; its failure makes the event FAILED again. */
  @Column({ name: 'manual_try', type: 'boolean', default: false })
  manualTry: boolean;

  @Column({ name: 'enqueued_at', type: 'timestamptz', nullable: true })
  enqueuedAt: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;
}
