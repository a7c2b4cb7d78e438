import { Cents } from '../domain/money';
import { ProviderRefusedError } from './provider-operation';

/**
 * The PIX provider as the modules see it: the sandbox (a static-style BR Code, payments played through
 * the sandbox routes) or a PSP through the BCB's API Pix (`api-pix`), each found by name in the ProviderRegistry. Every call
 * is made outside any database transaction (style.md).
 */
export interface PixChargeRequest {
  /** The charge's id at the provider, derived from the sale (pixTxid). */
  txid: string;
  amountCents: Cents;
  /** Seconds the charge can be paid for. */
  expiresInSeconds: number;
  /** The receiver's PIX key asked by the seller (sandbox only); the provider's own key when absent. */
  receiverKey: string | null;
  merchantName: string;
  merchantCity: string;
  payer: { name: string; documentType: 'CPF' | 'CNPJ' | null; documentNumber: string | null } | null;
  /** Shown to the payer in their bank app. */
  description: string | null;
}

export interface PixCharge {
  /** The copy-and-paste BR Code. */
  code: string;
  receiverKey: string;
  /** The txid the Pix will name. */
  externalId: string;
}

/** A refund of a received Pix (a `devolucao`) as the PSP reports it. */
export interface PixReturn {
  /** Our id for it, unique per refund (DevolucaoId). */
  id: string;
  /** The return's own end-to-end id (rtrId), once the PSP has one. */
  returnId: string | null;
  amountCents: Cents;
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  reason: string | null;
  /** Why it was made (the API Pix's natureza): ORIGINAL for a receiver's own request, MED_OPERACIONAL or MED_FRAUDE for a MED's. */
  nature: string;
}

/** A Pix received, as the PSP reports it. */
export interface ReceivedPix {
  endToEndId: string;
  /** The charge it paid; null for a Pix sent to the key without one. */
  txid: string | null;
  amountCents: Cents;
  paidAt: Date;
  returns: PixReturn[];
}

/** A PSP's refusal: an RFC 7807 problem (the BCB's API Pix), or a PSP's own error (Efí's `nome` and `mensagem`). */
export interface PixProblem {
  type?: string;
  title?: string;
  detail?: string;
  nome?: string;
  mensagem?: string;
}

/** The PSP answered that it will not do what was asked (4xx): retrying cannot help. */
export class PixRequestRefusedError extends ProviderRefusedError {
  constructor(
    readonly status: number,
    readonly problem: PixProblem,
  ) {
    const what = problem.title ?? problem.nome ?? problem.type ?? 'no reason given';
    const detail = problem.detail ?? problem.mensagem;
    super(`The PSP refused the request (${status}): ${what}${detail ? ` (${detail})` : ''}`);
  }
}

export interface PixProvider {
  readonly name: string;
  /**
   * Whether a charge asked without expiry stays open (the sandbox); a PSP's expire, so the sale is given
   * PSP_DEFAULT_EXPIRY_SECONDS to expire with its charge.
   */
  readonly keepsChargesOpen: boolean;
  /**
   * Whether the Pix it receives must be reconciled with it (a PSP: its notifications checked, its list of
   * received Pix and returns compared, its own returns booked); the sandbox's payments are its own events.
   */
  readonly reconciled: boolean;
  /** Creates the charge (idempotent by txid: the same txid again answers the charge already made). */
  createCharge(request: PixChargeRequest): Promise<PixCharge>;
  /** Removes an unpaid charge (its sale was cancelled or expired); a charge already gone or paid is left as it is. */
  removeCharge(txid: string): Promise<void>;
  /** The Pix with this end-to-end id, or null when the PSP has none (a forged notification). */
  findPix(endToEndId: string): Promise<ReceivedPix | null>;
  /** Every Pix received in [from, to], all pages; with `withReturnsOnly`, only those that carry a return. */
  listReceived(from: Date, to: Date, options?: { withReturnsOnly?: boolean }): Promise<ReceivedPix[]>;
  /** Asks the PSP to return `amountCents` of a Pix to its payer; idempotent by `refundId`. */
  requestReturn(endToEndId: string, refundId: string, amountCents: Cents, description: string): Promise<PixReturn>;
  /** The return as the PSP has it now, or null when it has none by that id. */
  findReturn(endToEndId: string, refundId: string): Promise<PixReturn | null>;
}

/**
 * The txid of a sale's charge at an API Pix PSP: 26 to 35 letters and digits (the BCB's rule for an
 * immediate charge), derived from the sale so that asking again names the same charge.
 */
export function pixTxid(saleId: number): string {
  return `GWSALE${String(saleId).padStart(20, '0')}`;
}

/** The sale a txid names, or null when it is not one of ours. */
export function saleIdOfTxid(txid: string | null): number | null {
  const match = txid ? /^GWSALE(\d{20})$/.exec(txid) : null;
  return match ? Number(match[1]) : null;
}
