import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { Cents } from '../../domain/money';
import { AutomaticPixJourney, AutomaticPixStatus } from '../../domain/automatic-pix';
import { BillingCycle } from '../../domain/subscription-billing';
import { SubscriptionStatus } from '../../domain/subscription-status';

@Entity({ name: 'subscriptions' })
export class SubscriptionEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  /** Moved only through SubscriptionsService (the table of domain/subscription-status.ts). */
  @Column({ type: 'varchar' })
  status: SubscriptionStatus;

  @Column({ name: 'billing_cycle', type: 'varchar' })
  billingCycle: BillingCycle;

  @Column({ name: 'amount_cents', type: 'bigint', transformer: centsTransformer })
  amountCents: Cents;

  @Column({ name: 'payment_method', type: 'varchar' })
  paymentMethod: 'PIX' | 'CREDIT_CARD';

  /**
   * The provider that holds its payment instrument (its stored card, or its Pix Automático recurrence),
   * set at creation and never rewritten: renewals are charged there. Null for a plain PIX subscription,
   * each of whose sales has its own provider.
   */
  @Column({ type: 'varchar', nullable: true })
  provider: string | null;

  /** The provider's card token that renewals are charged with; never the card number. */
  @Column({ name: 'card_token', type: 'varchar', nullable: true, select: false })
  cardToken: string | null;

  /**
   * An acquirer's token for the stored card (Cielo's CardToken, saved by the first charge or replaced by
   * the issuer's NewCard), sealed at rest (payments/stored-card-token.ts); null for the sandbox's cards,
   * whose token is `cardToken`.
   */
  @Column({ name: 'card_token_sealed', type: 'text', nullable: true, select: false })
  cardTokenSealed: string | null;

  @Column({ name: 'card_last_four', type: 'char', nullable: true })
  cardLastFour: string | null;

  @Column({ name: 'card_brand', type: 'varchar', nullable: true })
  cardBrand: string | null;

  @Column({ name: 'customer_name', type: 'varchar' })
  customerName: string;

  @Column({ name: 'customer_email', type: 'varchar' })
  customerEmail: string;

  /** The customer's document type, as the sale that opened it had it (null without a document). */
  @Column({ name: 'customer_document_type', type: 'varchar', nullable: true })
  customerDocumentType: 'cpf' | 'cnpj' | null;

  @Column({ name: 'customer_document', type: 'varchar', nullable: true })
  customerDocument: string | null;

  @Column({ name: 'customer_phone', type: 'varchar', nullable: true })
  customerPhone: string | null;

  /** Never null: the seller's productId or the product the gateway keeps for the item's title (subscription_products). */
  @Column({ name: 'product_id', type: 'integer' })
  productId: number;

  @Column({ name: 'product_name', type: 'varchar' })
  productName: string;

  @Column({ type: 'jsonb' })
  metadata: Record<string, unknown>;

  @Column({ name: 'postback_url', type: 'varchar', nullable: true })
  postbackUrl: string | null;

  @Column({ name: 'trial_days', type: 'smallint' })
  trialDays: number;

  @Column({ name: 'trial_ends_at', type: 'timestamptz', nullable: true })
  trialEndsAt: Date | null;

  @Column({ name: 'next_billing_date', type: 'timestamptz', nullable: true })
  nextBillingDate: Date | null;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true })
  cancelledAt: Date | null;

  @Column({ name: 'cancellation_reason', type: 'varchar', nullable: true })
  cancellationReason: string | null;

  @Column({ name: 'scheduled_cancellation_date', type: 'timestamptz', nullable: true })
  scheduledCancellationDate: Date | null;

  @Column({ name: 'paused_at', type: 'timestamptz', nullable: true })
  pausedAt: Date | null;

  @Column({ name: 'resumed_at', type: 'timestamptz', nullable: true })
  resumedAt: Date | null;

  /** The last period a charge was made for (0: the creating sale), its billing date and attempts. */
  @Column({ name: 'current_period', type: 'integer' })
  currentPeriod: number;

  @Column({ name: 'period_due_at', type: 'timestamptz', nullable: true })
  periodDueAt: Date | null;

  @Column({ name: 'period_attempts', type: 'integer' })
  periodAttempts: number;

  @Column({ name: 'next_retry_at', type: 'timestamptz', nullable: true })
  nextRetryAt: Date | null;

  @Column({ name: 'past_due_since', type: 'timestamptz', nullable: true })
  pastDueSince: Date | null;

  @Column({ name: 'awaiting_payment_since', type: 'timestamptz', nullable: true })
  awaitingPaymentSince: Date | null;

  @Column({ name: 'last_payment_date', type: 'timestamptz', nullable: true })
  lastPaymentDate: Date | null;

  @Column({ name: 'last_payment_status', type: 'varchar', nullable: true })
  lastPaymentStatus: string | null;

  @Column({ name: 'total_billings', type: 'integer' })
  totalBillings: number;

  @Column({ name: 'successful_billings', type: 'integer' })
  successfulBillings: number;

  @Column({ name: 'failed_billings', type: 'integer' })
  failedBillings: number;

  /** Charges approved after the subscription was cancelled or paused, and given back to the customer. */
  @Column({ name: 'refunded_billings', type: 'integer' })
  refundedBillings: number;

  /** Pix Automático (issue 22): where the payer's authorization stands; null when the subscription did not opt in. */
  @Column({ name: 'automatic_pix_status', type: 'varchar', nullable: true })
  automaticPixStatus: AutomaticPixStatus | null;

  @Column({ name: 'automatic_pix_journey', type: 'varchar', nullable: true })
  automaticPixJourney: AutomaticPixJourney | null;

  /** The PSP's id of the recurrence (idRec), once it was created there. */
  @Column({ name: 'automatic_pix_recurrence_id', type: 'varchar', nullable: true })
  automaticPixRecurrenceId: string | null;

  @Column({ name: 'automatic_pix_authorized_at', type: 'timestamptz', nullable: true })
  automaticPixAuthorizedAt: Date | null;

  /** When the authorization was rejected, expired or cancelled, and why. */
  @Column({ name: 'automatic_pix_ended_at', type: 'timestamptz', nullable: true })
  automaticPixEndedAt: Date | null;

  @Column({ name: 'automatic_pix_end_reason', type: 'varchar', nullable: true })
  automaticPixEndReason: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
