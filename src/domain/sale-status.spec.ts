import { InvalidTransitionError } from './domain-error';
import { isFinalSaleStatus, nextSaleStatus, SALE_EVENTS, SALE_STATUSES, SalePaymentMethod } from './sale-status';

const METHODS: SalePaymentMethod[] = ['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'];
const CARDS = ['CREDIT_CARD', 'DEBIT_CARD'];

/** Spec 3.1 written out as the allowed (from, event, method) → to; everything else must be refused. */
function expected(from: string, event: string, method: string): string | null {
  const card = CARDS.includes(method);
  const rows: Array<[string, string, boolean, string]> = [
    ['PENDENTE', 'PAYMENT_CONFIRMED', !card, 'PAGO'],
    ['PENDENTE', 'EXPIRED', !card, 'CANCELADO'],
    ['PENDENTE', 'CANCELLED', true, 'CANCELADO'],
    ['PENDENTE', 'PROCESSING_FAILED', true, 'FALHA'],
    ['PENDENTE', 'SENT_TO_ACQUIRER', card, 'EM_PROCESSAMENTO'],
    ['EM_PROCESSAMENTO', 'ACQUIRER_APPROVED', card, 'PAGO'],
    ['EM_PROCESSAMENTO', 'ACQUIRER_REFUSED', card, 'RECUSADO'],
    ['EM_PROCESSAMENTO', 'PROCESSING_FAILED', card, 'FALHA'],
    ['PAGO', 'REFUNDED', true, 'ESTORNADO'],
    ['PAGO', 'CHARGEBACK_OPENED', card, 'CHARGEBACK'],
    ['PAGO', 'MED_OPENED', method === 'PIX', 'MED'],
    ['CHARGEBACK', 'CHARGEBACK_REVERSED', card, 'PAGO'],
    ['CHARGEBACK', 'CHARGEBACK_CONFIRMED', card, 'ESTORNADO'],
    ['MED', 'MED_WON', method === 'PIX', 'PAGO'],
    ['MED', 'MED_LOST', method === 'PIX', 'ESTORNADO'],
    ['FALHA', 'PAYMENT_CONFIRMED', true, 'PAGO'],
    ['FALHA', 'CANCELLED', true, 'CANCELADO'],
  ];
  const row = rows.find(([f, e, applies]) => f === from && e === event && applies);
  return row ? row[3] : null;
}

describe('sale status machine (spec 3.1)', () => {
  for (const from of SALE_STATUSES) {
    for (const event of SALE_EVENTS) {
      for (const method of METHODS) {
        const to = expected(from, event, method);
        it(`${method} ${from} on ${event} → ${to ?? 'refused'}`, () => {
          if (to) expect(nextSaleStatus(from, event, method)).toBe(to);
          else expect(() => nextSaleStatus(from, event, method)).toThrow(InvalidTransitionError);
        });
      }
    }
  }

  it('has exactly three final states', () => {
    expect(SALE_STATUSES.filter(isFinalSaleStatus)).toEqual(['RECUSADO', 'CANCELADO', 'ESTORNADO']);
  });

  it('names the status and event it refused', () => {
    expect(() => nextSaleStatus('CANCELADO', 'PAYMENT_CONFIRMED', 'PIX')).toThrow('Cannot apply PAYMENT_CONFIRMED to a resource in status CANCELADO');
  });
});
