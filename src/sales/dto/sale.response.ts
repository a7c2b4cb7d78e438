import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class SaleCustomerResponse {
  @ApiProperty({ example: 'João da Silva' }) name: string;
  @ApiProperty({ example: 'joao@example.com' }) email: string;
  @ApiProperty({ example: '52998224725', description: 'Document number; empty string when none was given' }) document: string;
  @ApiProperty({ example: '11987654321', description: 'Digits; empty string when none was given' }) phone: string;
}

export class PixPaymentResponse {
  @ApiProperty({ example: '00020101021226...6304ABCD', description: 'Full PIX copy-and-paste code (BR Code)' }) key: string;
  @ApiProperty({ example: 'data:image/png;base64,iVBORw0KGgo...', description: 'PNG QR code of `key`' }) qrCodeBase64: string;
  @ApiProperty({ example: '2026-11-23T13:00:00.000Z', nullable: true, type: String, description: 'null: no expiry' })
  expiresAt: string | null;
}

export class CardPaymentResponse {
  @ApiProperty({ example: '1111' }) lastDigits: string;
  @ApiProperty({ example: 'VISA' }) brand: string;
}

export class BoletoPaymentResponse {
  @ApiProperty({ example: '00190000090000000001200000001234567890000009990', description: '47-digit typeable line' }) code: string;
  @ApiProperty({ example: '00199999900000099900000000001200000001234567', description: '44-digit bar code (the issuer’s, or read from the line)' }) barCode: string;
  @ApiProperty({
    example: 'https://transactionsandbox.pagador.com.br/post/pagador/reenvia.asp/8e1b2a3c-…',
    nullable: true,
    type: String,
    description: 'The printable boleto at its issuer (BOLETO_PROVIDER=cielo); null in the sandbox',
  })
  url: string | null;
  @ApiProperty({ example: '2026-11-25', description: 'Due date, YYYY-MM-DD' }) dueDate: string;
  @ApiProperty({
    example: '2026-11-29T02:59:59.999Z',
    description: 'When an unpaid boleto is cancelled: the end of its due date (sandbox), or of its due date plus the banks’ clearing days (CIELO_BOLETO_CLEARING_DAYS)',
  })
  expiresAt: string;
}

export class SalePaymentResponse {
  @ApiProperty({ example: 'PIX' }) method: string;
  @ApiProperty({ example: null, nullable: true, type: Number, description: 'Credit card only' }) installments: number | null;
  @ApiPropertyOptional({ type: PixPaymentResponse, description: 'PIX only' }) pix?: PixPaymentResponse;
  @ApiPropertyOptional({ type: CardPaymentResponse, description: 'Card only' }) card?: CardPaymentResponse;
  @ApiPropertyOptional({ type: BoletoPaymentResponse, description: 'Boleto only' }) boleto?: BoletoPaymentResponse;
}

/** Spec 2.2. */
/** Spec 2.5: the subscription a sale created. */
export class SaleSubscriptionResponse {
  @ApiProperty({ example: 17 }) id: number;
  @ApiProperty({ example: 'ACTIVE', description: 'PENDING for PIX (until paid), ACTIVE or TRIALING for an approved card' }) status: string;
  @ApiProperty({ example: 'MONTHLY' }) billingCycle: string;
  @ApiProperty({ example: 9990, description: 'Cents' }) amount: number;
  @ApiProperty({ example: '2026-12-22T13:00:00.000Z', nullable: true, type: String }) nextBillingDate: string | null;
  @ApiProperty({ example: null, nullable: true, type: String }) trialEndsAt: string | null;
  @ApiProperty({ example: 'joao@example.com' }) customerEmail: string;
  @ApiProperty({ example: 'João da Silva' }) customerName: string;
}

export class SaleResponse {
  @ApiProperty({ example: 1234 }) id: number;
  @ApiProperty({ example: '9990', description: 'Cents, as a string' }) amount: string;
  @ApiProperty({ example: 'PENDENTE' }) status: string;
  @ApiProperty({ example: 'PIX' }) paymentMethod: string;
  @ApiProperty({ type: SaleCustomerResponse }) customer: SaleCustomerResponse;
  @ApiProperty({ type: SalePaymentResponse }) payment: SalePaymentResponse;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'JSON-encoded shipping object; null for digital goods' })
  shipping: string | null;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
  @ApiPropertyOptional({ type: SaleSubscriptionResponse, description: 'Only when the request had subscription.enabled true' })
  subscription?: SaleSubscriptionResponse;
}

export class CreateSaleResponse {
  @ApiProperty({ example: 'Sale created' }) message: string;
  @ApiProperty({ type: SaleResponse }) sale: SaleResponse;
}

export class TransactionItemResponse {
  @ApiProperty({ example: 1 }) id: number;
  @ApiProperty({ example: 'Curso de fotografia' }) title: string;
  @ApiProperty({ example: 9990, description: 'Cents' }) unitPrice: number;
  @ApiProperty({ example: 1 }) quantity: number;
  @ApiProperty({ example: false }) tangible: boolean;
}

/** The acquirer's own answer to a card charge (issue 39). */
export class AcquirerReturnResponse {
  @ApiProperty({ example: '05', description: 'The acquirer’s return code (Cielo’s ReturnCode: ABECS codes in production, the sandbox’s own there)' }) code: string;
  @ApiProperty({ example: 'Não Autorizada', description: 'The acquirer’s text for it (Cielo’s ReturnMessage)' }) message: string;
}

/** Spec 2.3. */
export class TransactionResponse {
  @ApiProperty({ example: 1234 }) id: number;
  @ApiProperty({ example: 'PAGO' }) status: string;
  @ApiProperty({ example: 9990, description: 'Gross, cents' }) amount: number;
  @ApiPropertyOptional({ example: 9891, description: 'Credited after fees, cents; absent until paid' }) netAmount?: number;
  @ApiPropertyOptional({ example: 99, description: 'Fees, cents; absent until paid' }) systemFee?: number;
  @ApiPropertyOptional({ example: 0, description: 'Held in the blocked balance, cents; absent until paid' }) reserveAmount?: number;
  @ApiProperty({ example: 'PIX' }) paymentMethod: string;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z', description: 'Creation' }) date: string;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'When it was paid' }) completedAt: string | null;
  @ApiProperty({ type: SaleCustomerResponse }) customer: SaleCustomerResponse;
  @ApiProperty({ type: TransactionItemResponse, isArray: true }) items: TransactionItemResponse[];
  @ApiProperty({ example: '00020101021226...', nullable: true, type: String, description: 'PIX only' }) pixKey: string | null;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Card only' }) cardLastFour: string | null;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Card only' }) cardBrand: string | null;
  @ApiPropertyOptional({
    type: AcquirerReturnResponse,
    description: 'Card only: the acquirer’s own code and text for its answer to the charge (why a card was refused, RECUSADO; also kept on approvals and failures); absent when the acquirer gives none (the sandbox)',
  })
  acquirerReturn?: AcquirerReturnResponse;
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Boleto only' }) boletoCode: string | null;
  @ApiPropertyOptional({ example: 'sbx_pix_1234', description: 'Id at the payment provider; absent until it has one' }) externalTransactionId?: string;
  @ApiPropertyOptional({ example: 3, description: 'Credit card only' }) installments?: number;
  @ApiPropertyOptional({ type: Object, example: { street: 'Rua A', city: 'São Paulo' }, description: 'Physical goods only' }) shipping?: Record<string, string>;
}

/** A line of a sale's status history, as the operator sees it. */
export class SaleStatusChangeResponse {
  @ApiProperty({ example: 'PAGO', nullable: true, type: String, description: 'null for the sale’s first line' }) previousStatus: string | null;
  @ApiProperty({ example: 'CHARGEBACK' }) status: string;
  @ApiProperty({ example: '2026-11-23T13:00:00.000Z' }) changedAt: string;
  @ApiProperty({
    example: 'OPERATOR',
    nullable: true,
    enum: ['OPERATOR'],
    description: 'OPERATOR: a dispute event the operator recorded (POST /admin/sales/{id}/events); null: a move of the gateway itself (a provider’s evidence, a job, the seller’s API calls, the sandbox)',
  })
  recordedBy: 'OPERATOR' | null;
  @ApiProperty({ example: 'Chargeback reported in the acquirer’s back office, case 123456', nullable: true, type: String, description: 'The operator’s reason; null when recordedBy is' })
  reason: string | null;
}

/** A sale as the operator sees it: the lookup of spec 2.3 plus its seller and its status history, oldest first. */
export class AdminSaleResponse extends TransactionResponse {
  @ApiProperty({ example: 42 }) sellerId: number;
  @ApiProperty({ type: SaleStatusChangeResponse, isArray: true, description: 'Every move of the sale, oldest first, with who recorded the ones made on someone’s word' })
  statusHistory: SaleStatusChangeResponse[];
}
