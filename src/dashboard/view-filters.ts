import nunjucks from 'nunjucks';
import { Cents, cents, centsToBrl, reaisToCents } from '../domain/money';

const DATE_TIME = new Intl.DateTimeFormat('pt-BR', { timeZone: 'America/Sao_Paulo', dateStyle: 'short', timeStyle: 'short' });
const DATE_ONLY = new Intl.DateTimeFormat('pt-BR', { timeZone: 'America/Sao_Paulo', dateStyle: 'short' });

/** pt-BR words for the API's values; a value without one is shown as it is. */
export const LABELS: Record<string, string> = {
  PIX: 'PIX',
  CREDIT_CARD: 'Cartão de crédito',
  DEBIT_CARD: 'Cartão de débito',
  BOLETO: 'Boleto',
  TRANSFER: 'Transferência',
  PENDENTE: 'Pendente',
  EM_PROCESSAMENTO: 'Em processamento',
  PAGO: 'Pago',
  RECUSADO: 'Recusado',
  FALHA: 'Falha',
  CANCELADO: 'Cancelado',
  ESTORNADO: 'Estornado',
  CHARGEBACK: 'Chargeback',
  PRE_CHARGEBACK: 'Pré-chargeback',
  MED: 'MED',
  PENDING: 'Pendente',
  PROCESSING: 'Em processamento',
  COMPLETED: 'Concluído',
  FAILED: 'Recusado',
  CANCELLED: 'Cancelado',
  ACTIVE: 'Ativa',
  TRIALING: 'Em teste',
  PAUSED: 'Pausada',
  PAST_DUE: 'Em atraso',
  EXPIRED: 'Expirada',
  DELIVERED: 'Entregue',
  WEEKLY: 'Semanal',
  BIWEEKLY: 'Quinzenal',
  MONTHLY: 'Mensal',
  QUARTERLY: 'Trimestral',
  SEMIANNUAL: 'Semestral',
  YEARLY: 'Anual',
  SALE_POSTBACK: 'Postback de venda',
  SUBSCRIPTION_POSTBACK: 'Postback de assinatura',
  WITHDRAWAL_WEBHOOK: 'Webhook de saque',
  CPF: 'CPF',
  CNPJ: 'CNPJ',
  EMAIL: 'E-mail',
  PHONE: 'Telefone',
  RANDOM: 'Chave aleatória',
  WITHDRAWAL: 'Saque',
};

function toDate(value: unknown): Date | null {
  if (value instanceof Date) return value;
  if (typeof value === 'string' && value) {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}

/** Filters the templates use: money in cents or reais strings as R$, dates in Brazil time, labels. */
export function addViewFilters(environment: nunjucks.Environment): void {
  environment.addFilter('brl', (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) ? centsToBrl(cents(value)) : '—'));
  environment.addFilter('brlFromReais', (value: unknown) => {
    const amount: Cents | null = reaisToCents(value);
    return amount === null ? '—' : centsToBrl(amount);
  });
  environment.addFilter('datetime', (value: unknown) => {
    const date = toDate(value);
    return date ? DATE_TIME.format(date) : '—';
  });
  environment.addFilter('date', (value: unknown) => {
    const date = toDate(value);
    return date ? DATE_ONLY.format(date) : '—';
  });
  environment.addFilter('label', (value: unknown) => (typeof value === 'string' ? (LABELS[value] ?? value) : '—'));
  environment.addFilter('json', (value: unknown) => JSON.stringify(value, null, 2));
}
