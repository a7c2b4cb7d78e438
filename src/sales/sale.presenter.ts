import { lineToBarcode } from '../domain/boleto-line';
import { brazilDate } from '../domain/dates';
import { CreateSaleResponse, SaleCustomerResponse, TransactionResponse } from './dto/sale.response';
import { SaleEntity } from './entities/sale.entity';
import { SaleLookup, SaleLookupItem } from './sales.repository';

function customerOf(sale: Pick<SaleEntity, 'customerName' | 'customerEmail' | 'customerDocumentNumber' | 'customerPhone'>): SaleCustomerResponse {
  return {
    name: sale.customerName,
    email: sale.customerEmail,
    document: sale.customerDocumentNumber ?? '',
    phone: sale.customerPhone ?? '',
  };
}

const isCard = (sale: SaleEntity) => sale.paymentMethod === 'CREDIT_CARD' || sale.paymentMethod === 'DEBIT_CARD';

/** The creation answer of spec 2.2; `qrCodeBase64` is the PNG data URI of the sale's BR Code. */
export function toCreateSaleResponse(sale: SaleEntity, qrCodeBase64: string | null): CreateSaleResponse {
  const payment: CreateSaleResponse['sale']['payment'] = {
    method: sale.paymentMethod,
    installments: sale.paymentMethod === 'CREDIT_CARD' ? sale.installments : null,
  };
  if (sale.paymentMethod === 'PIX' && sale.pixCode && qrCodeBase64) {
    payment.pix = { key: sale.pixCode, qrCodeBase64, expiresAt: sale.expiresAt?.toISOString() ?? null };
  }
  if (isCard(sale) && sale.cardLastFour && sale.cardBrand) {
    payment.card = { lastDigits: sale.cardLastFour, brand: sale.cardBrand };
  }
  if (sale.paymentMethod === 'BOLETO' && sale.boletoCode && sale.expiresAt) {
    payment.boleto = {
      code: sale.boletoCode,
      barCode: sale.boletoBarcode ?? lineToBarcode(sale.boletoCode),
      url: sale.boletoUrl ?? null,
      dueDate: sale.boletoDueDate ?? brazilDate(new Date(sale.expiresAt.getTime() - 1)),
      expiresAt: sale.expiresAt.toISOString(),
    };
  }
  return {
    message: messageFor(sale),
    sale: {
      id: sale.id,
      amount: String(sale.amountCents),
      status: sale.status,
      paymentMethod: sale.paymentMethod,
      customer: customerOf(sale),
      payment,
      shipping: sale.shipping ? JSON.stringify(sale.shipping) : null,
      createdAt: sale.createdAt.toISOString(),
    },
  };
}

function messageFor(sale: SaleEntity): string {
  switch (sale.status) {
    case 'PAGO':
      return 'Sale created and paid';
    case 'RECUSADO':
      return 'Sale created: the card was refused';
    case 'FALHA':
      return 'Sale created: the payment failed to process';
    case 'EM_PROCESSAMENTO':
      return 'Sale created: the card payment is being processed; its outcome comes by postback and lookup';
    default:
      return 'Sale created';
  }
}

/**
 * The lookup answer of spec 2.3. The fields the spec makes optional without "or null" (netAmount,
 * systemFee, reserveAmount until paid; externalTransactionId before the provider knows the sale;
 * installments off credit cards; shipping for digital goods) are left out rather than null.
 */
export function toTransaction(sale: SaleLookup, items: SaleLookupItem[]): TransactionResponse {
  return {
    id: sale.id,
    status: sale.status,
    amount: sale.amountCents,
    ...present('netAmount', sale.netAmountCents),
    ...present('systemFee', sale.systemFeeCents),
    ...present('reserveAmount', sale.reserveAmountCents),
    paymentMethod: sale.paymentMethod,
    date: sale.createdAt.toISOString(),
    completedAt: sale.completedAt?.toISOString() ?? null,
    customer: customerOf(sale),
    items: [...items]
      .sort((a, b) => a.position - b.position)
      .map((item) => ({ id: item.id, title: item.title, unitPrice: item.unitPriceCents, quantity: item.quantity, tangible: item.tangible })),
    pixKey: sale.pixCode,
    cardLastFour: sale.cardLastFour,
    cardBrand: sale.cardBrand,
    ...present('acquirerReturn', sale.acquirerReturnCode === null || sale.acquirerReturnCode === undefined ? null : { code: sale.acquirerReturnCode, message: sale.acquirerReturnMessage ?? '' }),
    boletoCode: sale.boletoCode,
    ...present('externalTransactionId', sale.externalTransactionId),
    ...present('installments', sale.paymentMethod === 'CREDIT_CARD' ? sale.installments : null),
    ...present('shipping', sale.shipping),
  };
}

/** `{[key]: value}`, or nothing when the value is null or undefined. */
function present<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A line of the seller's list of sales. */
export interface SaleListItem {
  id: number;
  status: string;
  paymentMethod: string;
  amount: number;
  customerName: string;
  customerEmail: string;
  date: string;
  completedAt: string | null;
}

export function toSaleListItem(sale: SaleEntity): SaleListItem {
  return {
    id: sale.id,
    status: sale.status,
    paymentMethod: sale.paymentMethod,
    amount: sale.amountCents,
    customerName: sale.customerName,
    customerEmail: sale.customerEmail,
    date: sale.createdAt.toISOString(),
    completedAt: sale.completedAt?.toISOString() ?? null,
  };
}
