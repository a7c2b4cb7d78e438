import { InvalidTransitionError } from './domain-error';

/** Spec 3.1. */
export const SALE_STATUSES = ['PENDENTE', 'EM_PROCESSAMENTO', 'PAGO', 'RECUSADO', 'FALHA', 'CANCELADO', 'ESTORNADO', 'CHARGEBACK', 'MED'] as const;
export type SaleStatus = (typeof SALE_STATUSES)[number];

/** The payment provider's events on a sale (platform.md §3); the sandbox route lets a seller send them. */
export const PROVIDER_SALE_EVENTS = [
  'PAYMENT_CONFIRMED',
  'EXPIRED',
  'CANCELLED',
  'PROCESSING_FAILED',
  'REFUNDED',
  'CHARGEBACK_OPENED',
  'CHARGEBACK_REVERSED',
  'CHARGEBACK_CONFIRMED',
  'MED_OPENED',
  'MED_WON',
  'MED_LOST',
] as const;

/**
 * The dispute events (a card's chargeback, a PIX's MED): besides the sandbox's route, the operator records
 * them on any provider's sale (POST /admin/sales/{id}/events) while its acquirer or PSP reports them out
 * of band. domain/sale-move.ts DISPUTE_STEPS says what each does to the sale's dispute.
 */
export const DISPUTE_SALE_EVENTS = ['CHARGEBACK_OPENED', 'CHARGEBACK_REVERSED', 'CHARGEBACK_CONFIRMED', 'MED_OPENED', 'MED_WON', 'MED_LOST'] as const satisfies ReadonlyArray<
  (typeof PROVIDER_SALE_EVENTS)[number]
>;
export type DisputeSaleEvent = (typeof DISPUTE_SALE_EVENTS)[number];

/** What moves a sale: the provider events, and the steps of the card flow (sent to the acquirer, then its answer). */
export const SALE_EVENTS = ['SENT_TO_ACQUIRER', 'ACQUIRER_APPROVED', 'ACQUIRER_REFUSED', ...PROVIDER_SALE_EVENTS] as const;
export type SaleEvent = (typeof SALE_EVENTS)[number];

export type SalePaymentMethod = 'CREDIT_CARD' | 'DEBIT_CARD' | 'BOLETO' | 'PIX' | 'TRANSFER';

type Methods = 'ALL' | 'CARD' | 'PIX' | 'NOT_CARD';
interface Transition {
  to: SaleStatus;
  /** Which payment methods the move applies to. */
  methods: Methods;
}

/**
 * The whole state table of spec 3.1: from each status, the events it accepts and where they lead.
 * Final states (CANCELADO, RECUSADO, ESTORNADO) accept nothing. MED is for PIX only, CHARGEBACK for
 * cards only; the card flow is PENDENTE → EM_PROCESSAMENTO → PAGO, RECUSADO or FALHA. A dispute closed
 * for the seller (MED_WON, CHARGEBACK_REVERSED) on a sale its completed refunds already cover moves on
 * at once by this table's PAGO → ESTORNADO on REFUNDED, in the same move (domain/sale-move.ts).
 */
export const SALE_TRANSITIONS: Record<SaleStatus, Partial<Record<SaleEvent, Transition>>> = {
  PENDENTE: {
    PAYMENT_CONFIRMED: { to: 'PAGO', methods: 'NOT_CARD' },
    EXPIRED: { to: 'CANCELADO', methods: 'NOT_CARD' },
    CANCELLED: { to: 'CANCELADO', methods: 'ALL' },
    PROCESSING_FAILED: { to: 'FALHA', methods: 'ALL' },
    SENT_TO_ACQUIRER: { to: 'EM_PROCESSAMENTO', methods: 'CARD' },
  },
  EM_PROCESSAMENTO: {
    ACQUIRER_APPROVED: { to: 'PAGO', methods: 'CARD' },
    ACQUIRER_REFUSED: { to: 'RECUSADO', methods: 'CARD' },
    PROCESSING_FAILED: { to: 'FALHA', methods: 'CARD' },
  },
  PAGO: {
    REFUNDED: { to: 'ESTORNADO', methods: 'ALL' },
    CHARGEBACK_OPENED: { to: 'CHARGEBACK', methods: 'CARD' },
    MED_OPENED: { to: 'MED', methods: 'PIX' },
  },
  CHARGEBACK: {
    CHARGEBACK_REVERSED: { to: 'PAGO', methods: 'CARD' },
    CHARGEBACK_CONFIRMED: { to: 'ESTORNADO', methods: 'CARD' },
  },
  MED: {
    MED_WON: { to: 'PAGO', methods: 'PIX' },
    MED_LOST: { to: 'ESTORNADO', methods: 'PIX' },
  },
  FALHA: {
    PAYMENT_CONFIRMED: { to: 'PAGO', methods: 'ALL' },
    CANCELLED: { to: 'CANCELADO', methods: 'ALL' },
  },
  CANCELADO: {},
  RECUSADO: {},
  ESTORNADO: {},
};

const METHOD_GROUPS: Record<Methods, readonly SalePaymentMethod[]> = {
  ALL: ['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'],
  CARD: ['CREDIT_CARD', 'DEBIT_CARD'],
  PIX: ['PIX'],
  NOT_CARD: ['BOLETO', 'PIX', 'TRANSFER'],
};

/** The status a sale of `method` in `from` moves to on `event`; InvalidTransitionError when spec 3.1 does not allow it. */
export function nextSaleStatus(from: SaleStatus, event: SaleEvent, method: SalePaymentMethod): SaleStatus {
  const transition = SALE_TRANSITIONS[from][event];
  if (!transition || !METHOD_GROUPS[transition.methods].includes(method)) {
    throw new InvalidTransitionError(from, event);
  }
  return transition.to;
}

export function isFinalSaleStatus(status: SaleStatus): boolean {
  return Object.keys(SALE_TRANSITIONS[status]).length === 0;
}
