import { Cents } from '../domain/money';
import { PixKeyType } from '../domain/pix-key';
import { PayoutState } from '../domain/withdrawal-status';
import { ProviderRefusedError } from './provider-operation';

/** Sends withdrawals to PIX keys: a port of the providers that pay out (ProviderRegistry.payout). */
export interface PayoutRequest {
  /** Our idempotency reference: the withdrawal's id (payoutReference), the same on every try. The provider makes at most one payout per reference. */
  reference: string;
  /**
   * The provider's own id of this payout, as the withdrawal recorded it at its first attempt
   * (providerReferenceFor then; the reference itself for a provider without one of its own): every
   * attempt is sent under it.
   */
  providerReference: string;
  /** What reaches the key: the amount less the fees. */
  netAmountCents: Cents;
  pixKey: string;
  pixKeyType: PixKeyType;
  /**
   * The seller's own document: the key must belong to it (a provider that checks the key's owner refuses
   * another's: the safeguard against an account taken over). Null when the seller has none (a provider
   * that requires it is never asked: the withdrawal is refused first).
   */
  payee: { documentType: 'CPF' | 'CNPJ'; documentNumber: string } | null;
}

/** The provider took the payout: its id for it, and where the payout stands (taken, or already on its way). */
export interface PayoutReceipt {
  externalId: string;
  status: Extract<PayoutState, 'PENDING' | 'PROCESSING'>;
}

/** What the provider knows of the payout of a reference (its look-up). */
export interface PayoutResult {
  /** Taken and not on its way yet (PENDING), on its way, paid (COMPLETED), rejected, or cancelled before it was paid. */
  status: PayoutState;
  /** The provider's id of the payout (the Pix's end-to-end id, where the provider gives it); null when it gave none. */
  externalId: string | null;
  /** Why it was rejected or cancelled, when the provider says; null otherwise. */
  reason: string | null;
  /** What the provider says it sent, when it says (the evidence ledger:verify compares with the withdrawal). */
  amountCents?: Cents;
  /** The key the provider says it paid, when it says: a payout of another key or amount is not this withdrawal's. */
  pixKey?: string;
}

/** A payout as the provider lists it (reconciliation): our reference, or null for one the provider made for someone else. */
export interface ListedPayout {
  reference: string | null;
  /** The provider's own id of the send (Efí's idEnvio), whatever made it. */
  providerReference: string;
  status: PayoutState;
  amountCents: Cents;
  externalId: string | null;
  requestedAt: Date;
}

/**
 * The provider refuses to pay out this reference: retrying will not help. The refusal is settled by a
 * look-up: a payout the provider has (cancelled or rejected) is applied as it says; with none, the
 * withdrawal fails with `reason` (the provider's own words: Efí's `nome` and `mensagem`).
 */
export class PayoutRefusedError extends ProviderRefusedError {
  constructor(readonly reference: string, readonly reason: string) {
    super(`Payout ${reference} refused: ${reason}`);
    this.name = 'PayoutRefusedError';
  }
}

/** Called outside any database transaction, from the payout job and the recovery job (never from the request). */
export interface PayoutProvider {
  /**
   * Registers the payout, idempotent by reference (asked again, it answers the payout it registered
   * first); its outcome comes back later as the provider's callback, or to a look-up (findPayout).
   * PayoutRefusedError when the reference was cancelled or rejected.
   */
  requestPayout(request: PayoutRequest): Promise<PayoutReceipt>;
  /**
   * Cancels the payout of this reference before it is on its way; a later request for it is refused.
   * Idempotent; a payout already on its way or paid stays as it is (findPayout says which). Only where the
   * provider can (the sandbox's events route uses it; a Pix sent cannot be called back).
   */
  cancelPayout?(reference: string): Promise<void>;
  /**
   * What the provider knows of the payout of this reference, or null when it never received one (the
   * recovery job asks when the answer to a request or its callback was lost; null: it sends it again
   * under the same reference). `providerReference`: the id the withdrawal recorded at its first attempt
   * (null before any), which the provider looks up rather than one derived anew.
   */
  findPayout(reference: string, providerReference: string | null): Promise<PayoutResult | null>;
  /** Every payout the provider made in [from, to), ours and others (reconciliation), where it can list them. */
  listPayouts?(from: Date, to: Date): Promise<ListedPayout[]>;
  /** The provider's own id for the payout of `reference` (Efí's idEnvio), fixed on the withdrawal at its first attempt; the reference itself when omitted. */
  providerReferenceFor?(reference: string): string;
  /**
   * The least time between two attempts to send one payout (ms; 0 when omitted): long enough for whatever
   * an attempt did at the provider (an answer lost, a request still on its way) to show in a look-up. A
   * payout is sent again only when the look-up finds nothing that long after the last attempt, so a
   * refusal of the new attempt is the payout's fate, not a clash with an earlier one still on its way.
   */
  readonly resendAfterMs?: number;
  /** Whether it needs the seller's document (`payee`) to pay out: a withdrawal of a seller without one is refused. */
  readonly requiresPayeeDocument?: boolean;
  /**
   * The provider whose account its payouts leave from, when another adapter holds that account (Efí's
   * sends leave the API Pix account the Pix came into): the ledger's provider accounts of its withdrawals
   * (PSP_HOLDINGS, PAYOUT_IN_TRANSIT) name it, so the money out is taken from where the money in was booked.
   */
  readonly paysFrom?: string;
}

/** The provider reference of a withdrawal's payout. */
export const payoutReference = (withdrawalId: number): string => String(withdrawalId);
