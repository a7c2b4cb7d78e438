import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export interface SellerDetails {
  averageRevenue?: number | null;
  averageTicket?: number | null;
  physicalProducts?: boolean | null;
  productsDescription?: string | null;
  siteUrl?: string | null;
  phone?: string | null;
  email?: string | null;
}

export interface SellerAddress {
  street: string | null;
  streetNumber: string | null;
  zipCode: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
}

@Entity({ name: 'sellers' })
export class SellerEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar' })
  name: string;

  @Column({ type: 'varchar' })
  email: string;

  @Column({ type: 'varchar', nullable: true })
  phone: string | null;

  @Column({ name: 'legal_name', type: 'varchar' })
  legalName: string;

  @Column({ name: 'commercial_name', type: 'varchar', nullable: true })
  commercialName: string | null;

  @Column({ name: 'invoice_descriptor', type: 'varchar' })
  invoiceDescriptor: string;

  @Column({ type: 'boolean' })
  blocked: boolean;

  @Column({ name: 'uploaded_documents', type: 'boolean' })
  uploadedDocuments: boolean;

  @Column({ name: 'is_email_verified', type: 'boolean' })
  isEmailVerified: boolean;

  @Column({ name: 'is_phone_verified', type: 'boolean' })
  isPhoneVerified: boolean;

  @Column({ name: 'is_admin', type: 'boolean' })
  isAdmin: boolean;

  @Column({ name: 'is_master', type: 'boolean' })
  isMaster: boolean;

  @Column({ name: 'document_type', type: 'varchar', nullable: true })
  documentType: 'cpf' | 'cnpj' | null;

  @Column({ name: 'document_number', type: 'varchar', nullable: true })
  documentNumber: string | null;

  @Column({ name: 'is_credit_card_available', type: 'boolean' })
  isCreditCardAvailable: boolean;

  @Column({ name: 'is_boleto_available', type: 'boolean' })
  isBoletoAvailable: boolean;

  @Column({ name: 'is_pix_available', type: 'boolean' })
  isPixAvailable: boolean;

  @Column({ name: 'transfer_enabled', type: 'boolean' })
  transferEnabled: boolean;

  @Column({ name: 'anticipation_enabled', type: 'boolean' })
  anticipationEnabled: boolean;

  @Column({ name: 'anticipatable_volume_bps', type: 'integer' })
  anticipatableVolumeBps: number;

  @Column({ name: 'anticipation_price_bps', type: 'integer' })
  anticipationPriceBps: number;

  @Column({ name: 'min_anticipatable_days', type: 'integer' })
  minAnticipatableDays: number;

  /** The seller's overrides of the default fee schedule (domain/fees.ts), by key. */
  @Column({ name: 'fee_overrides', type: 'jsonb' })
  feeOverrides: Record<string, number>;

  @Column({ type: 'jsonb' })
  details: SellerDetails;

  @Column({ type: 'jsonb', nullable: true })
  address: SellerAddress | null;

  /** The postback signing secret, AES-256-GCM sealed (common/crypto/secrets.ts); never stored in clear. */
  @Column({ name: 'postback_secret_encrypted', type: 'text', select: false })
  postbackSecretEncrypted: string;

  /** The secret a rotation replaced, sealed the same way, still signing until its overlap window ends. */
  @Column({ name: 'previous_postback_secret_encrypted', type: 'text', nullable: true, select: false })
  previousPostbackSecretEncrypted: string | null;

  @Column({ name: 'previous_postback_secret_expires_at', type: 'timestamptz', nullable: true })
  previousPostbackSecretExpiresAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
