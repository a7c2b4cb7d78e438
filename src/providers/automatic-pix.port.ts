import { Cents } from '../domain/money';

/**
 * Pix Automático as the modules see it (API Pix 2.7+: `/rec`, `/locrec`, `/cobr`, retries): the
 * payer authorizes a recurrence once, and each renewal is a recurring charge the PSP collects on its
 * due date. Two adapters, found by name in the ProviderRegistry: the sandbox (which plays the
 * payer's bank through the sandbox routes) and `api-pix`. Every call is made outside any database
 * transaction (style.md); each is safe to repeat after an answer was lost.
 */
/** The BCB's periodicidade of a recurrence. */
export type RecurrencePeriod = 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL';
/** The BCB's status of a recurrence (RecStatus). */
export type RecurrenceStatus = 'CRIADA' | 'APROVADA' | 'REJEITADA' | 'EXPIRADA' | 'CANCELADA';
/** Who ended a recurrence (encerramento.cancelamento.solicitante). */
export type RecurrenceCanceller = 'PSP_PAGADOR' | 'USUARIO_PAGADOR' | 'PSP_RECEBEDOR' | 'USUARIO_RECEBEDOR';

export interface RecurrenceRequest {
  /** Our contract id for it (vinculo.contrato, ≤35 characters): recurrenceContract(subscriptionId). */
  contract: string;
  /** What the payer sees it is for (vinculo.objeto, cut to 35 characters). */
  object: string;
  /** The payer (vinculo.devedor): a CPF (11 digits) or CNPJ (14), its type, and a name. */
  debtor: { document: string; documentType: 'CPF' | 'CNPJ'; name: string };
  period: RecurrencePeriod;
  /** The first charge's date, YYYY-MM-DD (calendario.dataInicial). */
  firstDate: string;
  /** The last date charges may fall on, YYYY-MM-DD (calendario.dataFinal); null for until cancelled. */
  endDate: string | null;
  /** The fixed amount of every charge (valor.valorRec): a charge of any other amount is refused by the PSP. */
  amountCents: Cents;
  /**
   * Journey 2: a QR that only authorizes. Journey 3: a composite QR that pays the immediate charge
   * `firstChargeTxid` (already created through the PIX provider) and authorizes together.
   */
  journey: { kind: 'JOURNEY_2' } | { kind: 'JOURNEY_3'; firstChargeTxid: string };
}

export interface RecurrenceCreated {
  /** The PSP's idRec (29 characters). */
  recurrenceId: string;
  /** The copy-and-paste BR Code the payer reads (dadosQR.pixCopiaECola for the journey). */
  brCode: string;
}

export interface RecurrenceState {
  recurrenceId: string;
  status: RecurrenceStatus;
  /** When it reached its current status (the last atualizacao). */
  changedAt: Date;
  /** For CANCELADA: who cancelled it, and the catalog code; for REJEITADA the rejection code. */
  cancelledBy: RecurrenceCanceller | null;
  code: string | null;
  description: string | null;
}

/** The BCB's status of a recurring charge (CobRStatus) and of its attempts. */
export type RecurringChargeStatus = 'CRIADA' | 'ATIVA' | 'CONCLUIDA' | 'EXPIRADA' | 'REJEITADA' | 'CANCELADA';
export type ChargeAttemptStatus = 'SOLICITADA' | 'AGENDADA' | 'PAGA' | 'CANCELADA' | 'REJEITADA' | 'EXPIRADA';

export interface ChargeAttempt {
  /** The settlement date, YYYY-MM-DD. */
  date: string;
  kind: 'AGND' | 'NTAG' | 'RIFL';
  status: ChargeAttemptStatus;
  endToEndId: string;
  /** The rejection code when REJEITADA (e.g. insufficient funds). */
  failureCode: string | null;
}

export interface RecurringChargeRequest {
  /** The charge's txid: recurringChargeTxid(saleId). */
  txid: string;
  recurrenceId: string;
  /** YYYY-MM-DD. */
  dueDate: string;
  amountCents: Cents;
  /** infoAdicional (≤140). */
  description: string;
}

export interface RecurringChargeState {
  txid: string;
  recurrenceId: string;
  status: RecurringChargeStatus;
  dueDate: string;
  amountCents: Cents;
  attempts: ChargeAttempt[];
  /** The Pix that paid it (CONCLUIDA). */
  paid: { endToEndId: string; amountCents: Cents; paidAt: Date } | null;
}

/** Retries the recurrence allows after a charge's due date (politicaRetentativa). */
export const RETRY_POLICY = 'PERMITE_3R_7D';

export interface AutomaticPixProvider {
  /**
   * Creates the recurrence (and its location for the QR). Safe to repeat: a second call with the same
   * contract answers the recurrence already made, never a second one.
   */
  createRecurrence(request: RecurrenceRequest): Promise<RecurrenceCreated>;
  /** The recurrence as the PSP has it, or null when it has none by that id. */
  findRecurrence(recurrenceId: string): Promise<RecurrenceState | null>;
  /** Cancels it at the PSP as the receiver (USUARIO_RECEBEDOR); one already ended is left as it is. */
  cancelRecurrence(recurrenceId: string): Promise<RecurrenceState>;
  /** Creates the recurring charge (PUT /cobr/{txid}); the same txid again answers the charge already made. */
  createRecurringCharge(request: RecurringChargeRequest): Promise<RecurringChargeState>;
  findRecurringCharge(txid: string): Promise<RecurringChargeState | null>;
  /** Asks for a new attempt settling on `date` (YYYY-MM-DD, in the future); an attempt already there for it is not asked twice. */
  requestRetry(txid: string, date: string): Promise<RecurringChargeState>;
  /** Cancels a charge before its first attempt's day; one already ended, or past that day, is left as it is. */
  cancelRecurringCharge(txid: string): Promise<RecurringChargeState>;
}

/** The contract id of a subscription's recurrence (vinculo.contrato). */
export function recurrenceContract(subscriptionId: number): string {
  return `GWSUB${String(subscriptionId).padStart(20, '0')}`;
}

/** The txid of a renewal's recurring charge (26 to 35 letters and digits), derived from its sale. */
export function recurringChargeTxid(saleId: number): string {
  return `GWREC${String(saleId).padStart(21, '0')}`;
}

/** The sale a recurring charge's txid names, or null when it is not one of ours. */
export function saleIdOfRecurringTxid(txid: string): number | null {
  const match = /^GWREC(\d{21})$/.exec(txid);
  return match ? Number(match[1]) : null;
}
