import { Column, CreateDateColumn, Entity, OneToMany, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { calendarDateTransformer, centsTransformer } from '../../database/bigint-cents.transformer';
import { Cents } from '../../domain/money';
import { SaleStatus } from '../../domain/sale-status';
import { PaymentMethod } from '../dto/create-sale.dto';
import { SaleItemEntity } from './sale-item.entity';


export type ReversalReason = 'REFUNDED' | 'CHARGEBACK_CONFIRMED' | 'MED_LOST';

@Entity({ name: 'sales' })
export class SaleEntity {
  /** Taken from the sales_id_seq sequence before the sale is written (SalesRepository.nextId). */
  @PrimaryColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'seller_id', type: 'integer' })
  sellerId: number;

  /** Moved only through the money pipeline (MoneyPipeline, by the transition table of domain/sale-status.ts). */
  @Column({ type: 'varchar' })
  status: SaleStatus;

  @Column({ name: 'payment_method', type: 'varchar' })
  paymentMethod: PaymentMethod;

  @Column({ name: 'amount_cents', type: 'bigint', transformer: centsTransformer })
  amountCents: Cents;

  @Column({ name: 'system_fee_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  systemFeeCents: Cents | null;

  @Column({ name: 'net_amount_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  netAmountCents: Cents | null;

  @Column({ name: 'reserve_amount_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  reserveAmountCents: Cents | null;

  @Column({ name: 'reserve_release_due_at', type: 'timestamptz', nullable: true })
  reserveReleaseDueAt: Date | null;

  /** When the reserve stopped being held: released to available, or taken by a refund or chargeback. */
  @Column({ name: 'reserve_settled_at', type: 'timestamptz', nullable: true })
  reserveSettledAt: Date | null;

  @Column({ type: 'smallint', nullable: true })
  installments: number | null;

  @Column({ name: 'customer_name', type: 'varchar' })
  customerName: string;

  @Column({ name: 'customer_email', type: 'varchar' })
  customerEmail: string;

  @Column({ name: 'customer_document_type', type: 'varchar', nullable: true })
  customerDocumentType: 'cpf' | 'cnpj' | null;

  @Column({ name: 'customer_document_number', type: 'varchar', nullable: true })
  customerDocumentNumber: string | null;

  @Column({ name: 'customer_phone', type: 'varchar', nullable: true })
  customerPhone: string | null;

  /** The payment provider's card token; the card number and CVV are never stored. */
  @Column({ name: 'card_token', type: 'varchar', nullable: true, select: false })
  cardToken: string | null;

  @Column({ name: 'card_last_four', type: 'char', nullable: true })
  cardLastFour: string | null;

  @Column({ name: 'card_brand', type: 'varchar', nullable: true })
  cardBrand: string | null;

  /** The acquirer's own code and text for its answer to the card charge (Cielo's ReturnCode, ReturnMessage). */
  @Column({ name: 'acquirer_return_code', type: 'varchar', nullable: true })
  acquirerReturnCode: string | null;

  @Column({ name: 'acquirer_return_message', type: 'varchar', nullable: true })
  acquirerReturnMessage: string | null;

  /** What the acquirer reported captured for the card charge (Cielo's CapturedAmount): ledger:verify's evidence. */
  @Column({ name: 'provider_amount_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  providerAmountCents: Cents | null;

  /** The PIX copy-and-paste BR Code. */
  @Column({ name: 'pix_code', type: 'text', nullable: true })
  pixCode: string | null;

  @Column({ name: 'pix_receiver_key', type: 'varchar', nullable: true })
  pixReceiverKey: string | null;

  @Column({ name: 'boleto_code', type: 'char', nullable: true })
  boletoCode: string | null;

  /** The boleto's due date (YYYY-MM-DD); expiresAt is when it is cancelled unpaid (a real issuer's: the banks' clearing days later). Null before issue 40 (then the day of expiresAt). */
  @Column({ name: 'boleto_due_date', type: 'date', nullable: true, transformer: calendarDateTransformer })
  boletoDueDate: string | null;

  /** The 44-digit bar code the issuer gave (Cielo's BarCodeNumber); null for the sandbox's, whose is read from its line. */
  @Column({ name: 'boleto_barcode', type: 'char', nullable: true })
  boletoBarcode: string | null;

  /** The boleto's printable page at its issuer (Cielo's Url); null for the sandbox's. */
  @Column({ name: 'boleto_url', type: 'text', nullable: true })
  boletoUrl: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  shipping: Record<string, string> | null;

  @Column({ name: 'postback_url', type: 'varchar', nullable: true })
  postbackUrl: string | null;

  @Column({ type: 'jsonb' })
  tracking: Record<string, string>;

  @Column({ type: 'jsonb', nullable: true })
  metadata: Record<string, unknown> | null;

  @Column({ name: 'external_transaction_id', type: 'varchar', nullable: true })
  externalTransactionId: string | null;

  /**
   * The provider that holds the sale (ProviderRegistry): its rail's provider when it was made, never
   * rewritten; every later step (confirmation, refund, recovery, reconciliation, the ledger's provider
   * accounts) goes to it.
   */
  @Column({ type: 'varchar' })
  provider: string;

  /** The end-to-end id of the Pix that paid the sale, as the PSP reported it. */
  @Column({ name: 'pix_end_to_end_id', type: 'varchar', nullable: true })
  pixEndToEndId: string | null;

  /** When the sale's charge was removed at the PSP after the sale was cancelled (null while it is still to be removed). */
  @Column({ name: 'pix_charge_closed_at', type: 'timestamptz', nullable: true })
  pixChargeClosedAt: Date | null;

  /** A renewal collected by Pix Automático: the recurring charge's due date (YYYY-MM-DD); null for any other sale. */
  @Column({ name: 'automatic_pix_due_date', type: 'varchar', nullable: true })
  automaticPixDueDate: string | null;

  /** When the recurring charge reached the PSP (null: still to send). */
  @Column({ name: 'automatic_pix_sent_at', type: 'timestamptz', nullable: true })
  automaticPixSentAt: Date | null;

  /** Retries asked at the PSP after failed attempts (PERMITE_3R_7D: three at most). */
  @Column({ name: 'automatic_pix_retries', type: 'smallint', default: 0 })
  automaticPixRetries: number;

  /** Refunded of the sale so far: refunds asked for and not failed. */
  @Column({ name: 'refunded_cents', type: 'bigint', transformer: centsTransformer, default: 0 })
  refundedCents: Cents;

  /** What its completed refunds add up to (the payer has it back). */
  @Column({ name: 'refund_completed_cents', type: 'bigint', transformer: centsTransformer, default: 0 })
  refundCompletedCents: Cents;

  /** While a MED or chargeback is open: the gross it covers, fixed by its opening (domain/sale-move.ts DISPUTE_STEPS); null otherwise. */
  @Column({ name: 'dispute_amount_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  disputeAmountCents: Cents | null;

  /** While a MED or chargeback is open: the seller's net it covers, fixed by its opening (what a MED moved to blocked); null otherwise. */
  @Column({ name: 'dispute_net_cents', type: 'bigint', nullable: true, transformer: centsTransformer })
  disputeNetCents: Cents | null;

  @Column({ name: 'reversal_reason', type: 'varchar', nullable: true })
  reversalReason: ReversalReason | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  /** Set when a card charge was approved after its subscription was cancelled or paused: it is to be refunded. */
  @Column({ name: 'refund_due_at', type: 'timestamptz', nullable: true })
  refundDueAt: Date | null;

  /** The subscription this sale charges (its creating sale or a renewal), with the period and attempt. */
  @Column({ name: 'subscription_id', type: 'integer', nullable: true })
  subscriptionId: number | null;

  @Column({ name: 'billing_period', type: 'integer', nullable: true })
  billingPeriod: number | null;

  @Column({ name: 'billing_attempt', type: 'integer', nullable: true })
  billingAttempt: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @OneToMany(() => SaleItemEntity, (item) => item.sale)
  items: SaleItemEntity[];
}
