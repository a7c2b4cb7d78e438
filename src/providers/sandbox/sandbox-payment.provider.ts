import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { buildBoletoLine } from '../../domain/boleto-line';
import { detectCardBrand } from '../../domain/card';
import {
  Boleto,
  BoletoRequest,
  CardDetails,
  PreparedCard,
  ChargeRequest,
  ChargeResult,
  CardRefundAnswer,
  CardRefundRefusedError,
  CardRefundRequest,
  CardProvider,
  BoletoProvider,
  ThreeDSecureToken,
} from '../card-provider.port';
import { sandboxHoldsRefund } from './sandbox-refund-hold';

/** The sandbox decides at once: never PENDING. */
type Outcome = Exclude<ChargeResult['outcome'], 'PENDING'>;

/** The sandbox test cards (platform.md §3): first charge, later charges. Any other valid number is approved. */
export const SANDBOX_TEST_CARDS: Readonly<Record<string, { first: Outcome; renewal: Outcome }>> = {
  '4111111111111111': { first: 'APPROVED', renewal: 'APPROVED' },
  '5555555555554444': { first: 'APPROVED', renewal: 'APPROVED' },
  '6362970000457013': { first: 'APPROVED', renewal: 'APPROVED' },
  '4000000000000002': { first: 'REFUSED', renewal: 'REFUSED' },
  '4000000000000119': { first: 'FAILED', renewal: 'FAILED' },
  '4000000000000341': { first: 'APPROVED', renewal: 'REFUSED' },
};

/** Bank code written in sandbox boletos. */
export const SANDBOX_BOLETO_BANK = '001';

const OUTCOME_CODES: Record<Outcome, string> = { APPROVED: 'a', REFUSED: 'r', FAILED: 'f' };
const OUTCOMES_BY_CODE: Record<string, Outcome> = { a: 'APPROVED', r: 'REFUSED', f: 'FAILED' };
const REASONS: Record<Outcome, string | null> = {
  APPROVED: null,
  REFUSED: 'Card refused by the issuer (sandbox test card)',
  FAILED: 'Acquirer processing error (sandbox test card)',
};

const VOIDED_REASON = 'The charge reference was voided: nothing was charged';

interface ChargeRow {
  outcome: Outcome | 'VOIDED';
  external_id: string;
}

const toResult = (row: ChargeRow & { outcome: Outcome }): ChargeResult => ({ outcome: row.outcome, externalId: row.external_id, reason: REASONS[row.outcome] });

/**
 * The sandbox adapter: no acquirer is called. A card token carries the test card's behaviour
 * (tok_sbx_<first><renewal>_<random>), so charges stay deterministic across restarts without keeping
 * the card number anywhere. Each charge it accepts is recorded by reference in its own table
 * (sandbox_card_charges): a reference is charged at most once, whichever instance asks, and tests can
 * count the charges.
 */
@Injectable()
export class SandboxPaymentProvider implements CardProvider, BoletoProvider {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  async prepareCard(card: CardDetails): Promise<PreparedCard> {
    const behaviour = SANDBOX_TEST_CARDS[card.number] ?? { first: 'APPROVED', renewal: 'APPROVED' };
    return {
      token: `tok_sbx_${OUTCOME_CODES[behaviour.first]}${OUTCOME_CODES[behaviour.renewal]}_${randomBytes(12).toString('hex')}`,
      lastFour: card.number.slice(-4),
      brand: detectCardBrand(card.number) ?? 'UNKNOWN',
    };
  }

  async chargeCard(request: ChargeRequest): Promise<ChargeResult> {
    return (await this.chargeCards([request]))[0];
  }

  /** The delays are those of one call, whatever its size: a batch travels once. */
  async chargeCards(requests: ChargeRequest[]): Promise<ChargeResult[]> {
    if (requests.length === 0) return [];
    const { beforeRecordMs, beforeAnswerMs } = this.config.sandboxChargeDelays;
    if (beforeRecordMs > 0) await sleep(beforeRecordMs);
    const results = await this.recordCharges(requests);
    if (beforeAnswerMs > 0) await sleep(beforeAnswerMs);
    return results;
  }

  private async recordCharges(requests: ChargeRequest[]): Promise<ChargeResult[]> {
    const outcomes = requests.map((request) => {
      const match = /^tok_sbx_([arf])([arf])_/.exec(request.token ?? '');
      return match ? OUTCOMES_BY_CODE[request.kind === 'FIRST' ? match[1] : match[2]] : 'FAILED';
    });
    const random = randomBytes(6 * requests.length).toString('hex');
    // One statement for the whole call: each new charge, or the one already recorded under its reference
    // (the first of a reference asked twice in the call), read only when some reference was not inserted
    // (a one-time filter: the usual call reads nothing back, whatever plan the table's size gave). A row
    // inserted by a concurrent charge of the same reference is outside this statement's snapshot; it is
    // read again then.
    const rows: Array<ChargeRow & { reference: string }> = await this.dataSource.query(
      `WITH asked AS (
         SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::bigint[], $5::smallint[], $6::varchar[])
             AS v(reference, kind, outcome, amount_cents, installments, external_id)),
       inserted AS (
         INSERT INTO sandbox_card_charges (reference, kind, outcome, amount_cents, installments, external_id)
         SELECT * FROM asked ON CONFLICT (reference) DO NOTHING
         RETURNING reference, outcome, external_id)
       SELECT reference, outcome, external_id FROM inserted
       UNION ALL
       SELECT c.reference, c.outcome, c.external_id FROM sandbox_card_charges c
        WHERE (SELECT count(*) FROM inserted) < cardinality($1::varchar[])
          AND c.reference = ANY($1::varchar[]) AND NOT EXISTS (SELECT 1 FROM inserted i WHERE i.reference = c.reference)`,
      [
        requests.map((request) => request.reference),
        requests.map((request) => request.kind),
        outcomes,
        requests.map((request) => request.amountCents),
        requests.map((request) => request.installments),
        requests.map((request, index) => `sbx_ch_${request.reference}_${random.slice(index * 12, index * 12 + 12)}`),
      ],
    );
    const recorded = new Map(rows.map((row) => [row.reference, row]));
    const results: ChargeResult[] = [];
    for (const { reference } of requests) {
      const row = recorded.get(reference) ?? ((await this.row(reference)) as ChargeRow);
      results.push(row.outcome === 'VOIDED' ? { outcome: 'FAILED', externalId: row.external_id, reason: VOIDED_REASON } : toResult({ ...row, outcome: row.outcome }));
    }
    return results;
  }

  async findCharge(reference: string): Promise<ChargeResult | null> {
    const row = await this.row(reference);
    return row && row.outcome !== 'VOIDED' ? toResult({ ...row, outcome: row.outcome }) : null;
  }

  /** Closes the reference at once, whenever its charge was sent: a charge recorded after it is refused. */
  async voidCharge(reference: string, _sentAt: Date | null = null): Promise<ChargeResult | null> {
    await this.dataSource.query(
      `INSERT INTO sandbox_card_charges (reference, outcome, external_id) VALUES ($1, 'VOIDED', $2) ON CONFLICT (reference) DO NOTHING`,
      [reference, `sbx_void_${reference}`],
    );
    return this.findCharge(reference);
  }

  /**
   * The sandbox's 3-D Secure token: a placeholder (no MPI, no script). Debit sales in the sandbox carry
   * card.threeDSecure with the documented test values (docs/api.md), checked by the same ECI rules.
   */
  async threeDSecureToken(): Promise<ThreeDSecureToken> {
    return { accessToken: `sbx_3ds_${randomBytes(16).toString('hex')}`, expiresAt: new Date(Date.now() + 20 * 60_000), environment: 'SANDBOX', scriptUrl: null };
  }

  async refundCharge(request: CardRefundRequest): Promise<CardRefundAnswer> {
    if (sandboxHoldsRefund(request.refundId, request.amountCents)) return { status: 'PENDING' };
    return this.recordRefund(request);
  }

  /** A refund it held, made now by the sandbox's refund events route (recorded), or refused when it was refused first. */
  async settleHeldRefund(request: CardRefundRequest): Promise<CardRefundAnswer> {
    return this.recordRefund(request);
  }

  /**
   * A refund it held, refused by the sandbox's refund events route: recorded as refused unless it was made
   * first. Its record decides once, whichever of the two comes first: REFUSED, or MADE (the refund stands).
   */
  async refuseHeldRefund(request: CardRefundRequest): Promise<'REFUSED' | 'MADE'> {
    await this.dataSource.query(
      `INSERT INTO sandbox_card_refunds (refund_id, reference, amount_cents, refused)
       SELECT $2::varchar, c.reference, $3::bigint, true FROM sandbox_card_charges c WHERE c.reference = $1::varchar FOR UPDATE
       ON CONFLICT (refund_id) DO NOTHING`,
      [request.reference, request.refundId, request.amountCents],
    );
    return (await this.refundRecord(request)) === 'MADE' ? 'MADE' : 'REFUSED';
  }

  /** What its record says of a refund: made, refused, or none. */
  private async refundRecord(request: CardRefundRequest): Promise<'MADE' | 'REFUSED' | null> {
    const [row]: Array<{ refused: boolean }> = await this.dataSource.query(`SELECT refused FROM sandbox_card_refunds WHERE refund_id = $1 AND reference = $2`, [
      request.refundId,
      request.reference,
    ]);
    return row ? (row.refused ? 'REFUSED' : 'MADE') : null;
  }

  private async recordRefund(request: CardRefundRequest): Promise<CardRefundAnswer> {
    // One statement: the refund recorded if the approved charge has that much left (or the one recorded
    // under this id before), and the charge marked refunded once nothing is left.
    // The charge row is locked first, so refunds of one charge (and a refusal of a held one) are recorded one
    // at a time; the record is read again afterwards, in a snapshot that sees what the others wrote.
    await this.dataSource.query(
      `WITH charge AS (
         SELECT c.reference, (c.amount_cents - COALESCE((SELECT sum(r.amount_cents) FROM sandbox_card_refunds r WHERE r.reference = c.reference AND NOT r.refused), 0))::bigint AS left_cents
           FROM sandbox_card_charges c WHERE c.reference = $1::varchar AND c.outcome = 'APPROVED' FOR UPDATE),
       inserted AS (
         INSERT INTO sandbox_card_refunds (refund_id, reference, amount_cents)
         SELECT $2::varchar, reference, $3::bigint FROM charge WHERE left_cents >= $3::bigint
         ON CONFLICT (refund_id) DO NOTHING
         RETURNING refund_id, reference)
       UPDATE sandbox_card_charges c SET refunded_at = COALESCE(c.refunded_at, now())
         FROM charge WHERE c.reference = charge.reference AND charge.left_cents = $3::bigint AND EXISTS (SELECT 1 FROM inserted)`,
      [request.reference, request.refundId, request.amountCents],
    );
    const record = await this.refundRecord(request);
    if (record === null) throw new CardRefundRefusedError(`The sandbox acquirer has no approved charge for reference ${request.reference} with ${request.amountCents} cents left to refund`);
    if (record === 'REFUSED') throw new CardRefundRefusedError(`The sandbox acquirer refused refund ${request.refundId}`);
    return { status: 'COMPLETED', externalId: `sbx_rf_${request.refundId}` };
  }

  private async row(reference: string): Promise<ChargeRow | null> {
    const [row]: ChargeRow[] = await this.dataSource.query(`SELECT outcome, external_id FROM sandbox_card_charges WHERE reference = $1`, [reference]);
    return row ?? null;
  }

  async createBoleto(request: BoletoRequest): Promise<Boleto> {
    const code = buildBoletoLine({
      bankCode: SANDBOX_BOLETO_BANK,
      amountCents: request.amountCents,
      dueDate: request.dueDate,
      reference: request.reference,
    });
    return { code, externalId: `sbx_bol_${request.reference}` };
  }
}
