import { DataSource } from 'typeorm';

/** A sale held as paid, or a withdrawal paid out, whose provider has no record of its money (or a sale whose returns differ from what the ledger booked). */
export interface BackingProblem {
  /** "sale 12", "withdrawal 7". */
  record: string;
  provider: string;
  problem: string;
}

export interface BackingReport {
  /** Sales held as paid (PAGO, or paid then reversed or disputed), by the provider that holds them. */
  heldAsPaid: Array<{ provider: string; sales: number; cents: number }>;
  /** A PSP's sales whose returns (the seller's refunds and the PSP's own) were compared with the ledger. */
  returnsCompared: { sales: number; returns: number; cents: number };
  /** Withdrawals paid out (COMPLETED), by the provider that paid them. */
  paidOut: Array<{ provider: string; withdrawals: number; cents: number }>;
  problems: BackingProblem[];
}

/**
 * ledger:verify's provider check (issue 35): the ledger may balance and still book money no provider
 * holds. Every sale held as paid must be backed by the record of the provider that holds it:
 * the provider written on the sale (`provider`):
 * - the API Pix PSP's (api-pix): its Pix, confirmed by the PSP and applied to it (pix_receipts, outcome
 *   APPLIED), with the sale's end-to-end id and amount; a Pix Automático charge, its settlement at the PSP
 *   (the end-to-end id its /cobr reported, or its receipt);
 * - the sandbox's: its own record of the payment (sandbox_payments, written by its events route), of the
 *   card charge it approved (sandbox_card_charges) or of the recurring charge it settled, of the sale's amount;
 * - Cielo's (cielo): a card payment captured of the sale's amount, as Cielo reported it when the charge was
 *   applied (`Payment.CapturedAmount` of the sale's answer or of its look-up by PaymentId, kept in
 *   provider_amount_cents) under the PaymentId named on the sale; a boleto, paid of the sale's amount as
 *   Cielo's look-up reported it when the payment was applied (provider_amount_cents);
 * - any other provider's: its answer named on the sale (the provider's id for the payment,
 *   external_transaction_id), until a check of its own records is written here.
 * Every withdrawal COMPLETED must be backed by a Pix its provider sent of its net amount: Efí's, the
 * amount its look-up reported (provider_amount_cents, written with the move) and the send's end-to-end id;
 * the sandbox's, its record of the payout (sandbox_payouts) paid for that amount (one completed before the
 * sandbox kept its payouts' outcome: its id, unless its record says otherwise); any other provider's, its
 * id for the payout (external_id).
 * And for a PSP's sales the returns must match the ledger: what the PSP holds for the sale (PSP_HOLDINGS)
 * is minus its amount plus every completed return, and what is in transit (REFUNDS_IN_TRANSIT) every
 * pending one. It reads the tables of the providers' evidence directly: an audit, read-only, run by the
 * operator's command and after the e2e suite and the chaos run.
 */
export async function checkProviderBacking(dataSource: DataSource): Promise<BackingReport> {
  const held: Array<{ id: number; holder: string; amount_cents: string; backed: boolean; reason: string | null }> = await dataSource.query(`
    WITH held AS (
      SELECT s.id, s.amount_cents, s.pix_end_to_end_id, s.external_transaction_id, s.provider_amount_cents, s.payment_method,
             s.provider AS holder, s.automatic_pix_sent_at IS NOT NULL AS automatic
        FROM sales s
       WHERE s.status IN ('PAGO', 'ESTORNADO', 'MED', 'CHARGEBACK')),
    evidence AS (
      SELECT h.*,
             EXISTS (SELECT 1 FROM pix_receipts r WHERE r.sale_id = h.id AND r.outcome = 'APPLIED' AND r.end_to_end_id = h.pix_end_to_end_id AND r.amount_cents = h.amount_cents) AS psp_pix,
             EXISTS (SELECT 1 FROM sandbox_payments p WHERE p.sale_id = h.id AND p.amount_cents = h.amount_cents) AS sandbox_payment,
             EXISTS (SELECT 1 FROM sandbox_card_charges c WHERE c.reference = h.id::text AND c.outcome = 'APPROVED' AND c.amount_cents = h.amount_cents) AS sandbox_card,
             EXISTS (SELECT 1 FROM sandbox_recurring_charges c WHERE c.txid = 'GWREC' || lpad(h.id::text, 21, '0') AND c.status = 'CONCLUIDA' AND c.amount_cents = h.amount_cents) AS sandbox_recurring
        FROM held h)
    SELECT id, holder, amount_cents,
           CASE WHEN holder = 'api-pix' AND automatic THEN psp_pix OR pix_end_to_end_id IS NOT NULL
                WHEN holder = 'api-pix' THEN psp_pix
                WHEN holder = 'sandbox' THEN sandbox_payment OR sandbox_card OR sandbox_recurring
                WHEN holder = 'cielo' THEN payment_method IN ('CREDIT_CARD', 'DEBIT_CARD', 'BOLETO') AND external_transaction_id IS NOT NULL
                                           AND provider_amount_cents IS NOT DISTINCT FROM amount_cents
                ELSE external_transaction_id IS NOT NULL END AS backed,
           CASE WHEN holder = 'api-pix' AND automatic THEN 'no settlement of its recurring charge'
                WHEN holder = 'api-pix' THEN CASE WHEN pix_end_to_end_id IS NULL THEN 'held as paid with no Pix named'
                                                  ELSE 'no Pix confirmed by the PSP with its end-to-end id and amount' END
                WHEN holder = 'sandbox' THEN 'the sandbox has no record of its payment'
                WHEN holder = 'cielo' THEN 'no payment captured by Cielo of its amount (a card charge captured or a boleto paid; its PaymentId ' || COALESCE(external_transaction_id, 'none')
                                           || ', captured ' || COALESCE(provider_amount_cents::text, 'none') || ')'
                ELSE 'held as paid with no payment of its provider named' END AS reason
      FROM evidence`);
  const returns: Array<{ id: number; returns: string; completed: string; pending: string; held_delta: string; in_transit: string; amount_cents: string }> = await dataSource.query(`
    SELECT s.id, s.amount_cents,
           (SELECT count(*) FROM sale_refunds r WHERE r.sale_id = s.id) AS returns,
           (SELECT COALESCE(sum(amount_cents), 0) FROM sale_refunds r WHERE r.sale_id = s.id AND r.status = 'COMPLETED') AS completed,
           (SELECT COALESCE(sum(amount_cents), 0) FROM sale_refunds r WHERE r.sale_id = s.id AND r.status = 'PENDING') AS pending,
           (SELECT COALESCE(sum(amount_cents), 0) FROM ledger_entries e WHERE e.reference_type = 'SALE' AND e.reference_id = s.id AND e.account = 'PSP_HOLDINGS' AND e.provider = 'api-pix') AS held_delta,
           (SELECT COALESCE(sum(amount_cents), 0) FROM ledger_entries e WHERE e.reference_type = 'SALE' AND e.reference_id = s.id AND e.account = 'REFUNDS_IN_TRANSIT' AND e.provider = 'api-pix') AS in_transit
      FROM sales s
     WHERE s.provider = 'api-pix' AND s.completed_at IS NOT NULL`);

  const paid: Array<{ id: number; provider: string; net_amount_cents: string; backed: boolean; reason: string }> = await dataSource.query(`
    SELECT w.id, w.provider, w.net_amount_cents,
           CASE WHEN w.provider = 'efi' THEN w.external_id IS NOT NULL AND w.provider_amount_cents IS NOT DISTINCT FROM w.net_amount_cents
                -- A withdrawal completed before the sandbox kept its payouts' outcome (issue 37) has no record or one still
                -- ACCEPTED: backed by the sandbox's id for it, unless the record says otherwise.
                WHEN w.provider = 'sandbox' THEN EXISTS (SELECT 1 FROM sandbox_payouts p WHERE p.reference = w.id::text AND p.status = 'COMPLETED' AND p.net_amount_cents = w.net_amount_cents)
                                                OR (w.external_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sandbox_payouts p WHERE p.reference = w.id::text AND p.status <> 'ACCEPTED'))
                ELSE w.external_id IS NOT NULL END AS backed,
           CASE WHEN w.provider = 'efi' THEN 'no Pix sent by Efí of its net amount confirmed by a look-up (provider_amount_cents ' || COALESCE(w.provider_amount_cents::text, 'none') || ')'
                WHEN w.provider = 'sandbox' THEN 'the sandbox has no record of its payout paid for its net amount'
                ELSE 'paid out with no payout of its provider named' END AS reason
      FROM withdrawals w
     WHERE w.status = 'COMPLETED'`);

  const problems: BackingProblem[] = [
    ...held.filter((sale) => !sale.backed).map((sale) => ({ record: `sale ${sale.id}`, provider: sale.holder, problem: sale.reason as string })),
    ...paid.filter((withdrawal) => !withdrawal.backed).map((withdrawal) => ({ record: `withdrawal ${withdrawal.id}`, provider: withdrawal.provider, problem: withdrawal.reason })),
  ];
  let compared = { sales: 0, returns: 0, cents: 0 };
  for (const sale of returns) {
    const expectedHeld = -Number(sale.amount_cents) + Number(sale.completed);
    compared = { sales: compared.sales + 1, returns: compared.returns + Number(sale.returns), cents: compared.cents + Number(sale.completed) };
    if (Number(sale.held_delta) !== expectedHeld) {
      problems.push({ record: `sale ${sale.id}`, provider: 'api-pix', problem: `the ledger has ${sale.held_delta} cents of PSP_HOLDINGS for it; its amount less its completed returns is ${expectedHeld}` });
    }
    if (Number(sale.in_transit) !== Number(sale.pending)) {
      problems.push({ record: `sale ${sale.id}`, provider: 'api-pix', problem: `the ledger has ${sale.in_transit} cents of REFUNDS_IN_TRANSIT for it; its pending returns add up to ${sale.pending}` });
    }
  }
  const byHolder = new Map<string, { provider: string; sales: number; cents: number }>();
  for (const sale of held) {
    const figures = byHolder.get(sale.holder) ?? { provider: sale.holder, sales: 0, cents: 0 };
    byHolder.set(sale.holder, { ...figures, sales: figures.sales + 1, cents: figures.cents + Number(sale.amount_cents) });
  }
  const byPayer = new Map<string, { provider: string; withdrawals: number; cents: number }>();
  for (const withdrawal of paid) {
    const figures = byPayer.get(withdrawal.provider) ?? { provider: withdrawal.provider, withdrawals: 0, cents: 0 };
    byPayer.set(withdrawal.provider, { ...figures, withdrawals: figures.withdrawals + 1, cents: figures.cents + Number(withdrawal.net_amount_cents) });
  }
  return { heldAsPaid: [...byHolder.values()], returnsCompared: compared, paidOut: [...byPayer.values()], problems };
}
