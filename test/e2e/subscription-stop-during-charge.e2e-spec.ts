import { BillingService } from '../../src/payments/billing.service';
import { createSeller, TestSeller } from './setup/factories';
import { Receiver } from './setup/receiver';
import { balanceOf, card, customer } from './setup/sales';
import { startApp, TestApp } from './setup/test-app';

/**
 * Issue 19, finding 1: a customer charged after cancelling. With a slow sandbox acquirer
 * (SANDBOX_CHARGE_DELAY_MS: the charge travels before the acquirer records it; SANDBOX_CHARGE_ANSWER_DELAY_MS:
 * the charge is made and its answer travels), a cancel or pause answered while a renewal's charge is in
 * flight leaves no charge standing: the reference is voided (nothing charged, the sale FALHA), or the
 * charge made first is refunded through the acquirer, its ledger posting and postbacks written, and the
 * subscription counts it in refundedBillings. Both for the single charge path and the billing batch.
 */
const DELAY_MS = 1500;

describe('A subscription stopped while its renewal is being charged (issue 19)', () => {
  let slowToRecord: TestApp;
  let slowToAnswer: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    slowToRecord = await startApp({ SANDBOX_CHARGE_DELAY_MS: String(DELAY_MS), POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true' });
    slowToAnswer = await startApp({ SANDBOX_CHARGE_ANSWER_DELAY_MS: String(DELAY_MS), POSTBACK_ALLOW_PRIVATE_NETWORKS: 'true' });
    receiver = await Receiver.start();
  }, 60_000);
  afterAll(async () => {
    await receiver.close();
    await slowToRecord.close();
    await slowToAnswer.close();
  });

  const subscribe = async (t: TestApp, seller: TestSeller): Promise<{ id: number; nextBillingDate: string }> => {
    const response = await t.http
      .post('/api/sales')
      .set(seller.headers)
      .send({
        amount: 4990,
        paymentMethod: 'CREDIT_CARD',
        customer,
        card: card(),
        items: [{ title: 'Plano', unitPrice: 4990, quantity: 1, tangible: false }],
        subscription: { enabled: true, billingCycle: 'MONTHLY' },
        postbackUrl: `${receiver.url}/stop/${seller.id}`,
      })
      .expect(201);
    expect(response.body.sale.status).toBe('PAGO');
    return response.body.sale.subscription;
  };

  /** Waits until every listed subscription has a renewal sale whose charge is in flight (EM_PROCESSAMENTO). */
  async function renewalsInFlight(t: TestApp, subscriptionIds: number[]): Promise<number[]> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const rows: Array<{ id: number }> = await t.db.query(
        `SELECT id FROM sales WHERE subscription_id = ANY($1::int[]) AND billing_period = 1 AND status = 'EM_PROCESSAMENTO' ORDER BY subscription_id`,
        [subscriptionIds],
      );
      if (rows.length === subscriptionIds.length) return rows.map((row) => row.id);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the renewals never went out to the acquirer');
  }

  const renewalOf = async (t: TestApp, subscriptionId: number) =>
    (await t.db.query(`SELECT id, status, refund_due_at FROM sales WHERE subscription_id = $1 AND billing_period = 1`, [subscriptionId]))[0] as { id: number; status: string };
  const chargeOf = async (t: TestApp, saleId: number) =>
    (await t.db.query(`SELECT outcome, refunded_at IS NOT NULL AS refunded FROM sandbox_card_charges WHERE reference = $1`, [String(saleId)]))[0] as { outcome: string; refunded: boolean };
  const subscriptionOf = async (t: TestApp, seller: TestSeller, id: number) => (await t.http.get(`/api/subscriptions/${id}`).set(seller.headers).expect(200)).body.data;
  const ledgerOf = async (t: TestApp, saleId: number) =>
    (
      await t.db.query(
        `SELECT sum(amount_cents) FILTER (WHERE account IN ('AVAILABLE', 'BLOCKED'))::int AS net, count(*)::int AS entries,
                sum(amount_cents) FILTER (WHERE account = 'ACQUIRER_RECEIVABLE')::int AS receivable
           FROM ledger_entries WHERE reference_type = 'SALE' AND reference_id = $1`,
        [saleId],
      )
    )[0] as { net: number | null; entries: number; receivable: number | null };
  const postbackStatuses = (seller: TestSeller, saleId: number) =>
    receiver.received.filter((r) => r.path === `/stop/${seller.id}` && r.body.type === 'transaction.status_changed' && (r.body.data as { id: number }).id === saleId).map((r) => r.body.status);

  describe('a subscription billed alone', () => {
    const bill = (t: TestApp, seller: TestSeller, dueAt: string) => t.app.get(BillingService).runBilling(new Date(new Date(dueAt).getTime() + 60_000), seller.id);

    /** A subscription whose renewal is billed; `stop` sent once its charge is in flight (and `ready` holds); the billing run awaited. */
    async function stopDuringCharge(t: TestApp, stop: string, ready: (saleId: number) => Promise<boolean> = async () => true) {
      const seller = await createSeller(t);
      const subscription = await subscribe(t, seller);
      const before = await balanceOf(t, seller);
      const billing = bill(t, seller, subscription.nextBillingDate);
      const [saleId] = await renewalsInFlight(t, [subscription.id]);
      await waitUntil(() => ready(saleId));
      await t.http.post(`/api/subscriptions/${subscription.id}/${stop}`).set(seller.headers).send({}).expect(200);
      await billing;
      return { seller, subscription, before, saleId };
    }

    it.each(['cancel', 'pause'])('%s while the charge travels to the acquirer voids it: nothing charged, the renewal FALHA, the balance unchanged', async (stop) => {
      const t = slowToRecord;
      const { seller, subscription, before, saleId } = await stopDuringCharge(t, stop);

      expect(await renewalOf(t, subscription.id)).toMatchObject({ id: saleId, status: 'FALHA' });
      expect(await chargeOf(t, saleId)).toEqual({ outcome: 'VOIDED', refunded: false });
      expect(await ledgerOf(t, saleId)).toEqual({ net: null, entries: 0, receivable: null });
      expect(await balanceOf(t, seller)).toEqual(before);
      expect((await subscriptionOf(t, seller, subscription.id)).status).toBe(stop === 'cancel' ? 'CANCELLED' : 'PAUSED');
    });

    it.each(['cancel', 'pause'])('%s while the approval travels back refunds the charge: ESTORNADO, announced, counted, the balance back where it was', async (stop) => {
      const t = slowToAnswer;
      // The acquirer has made the charge (its answer is still on its way) when the seller stops the subscription.
      const { seller, subscription, before, saleId } = await stopDuringCharge(t, stop, async (id) => (await chargeOf(t, id))?.outcome === 'APPROVED');

      expect(await renewalOf(t, subscription.id)).toMatchObject({ id: saleId, status: 'ESTORNADO' });
      expect(await chargeOf(t, saleId)).toEqual({ outcome: 'APPROVED', refunded: true });
      // Credited when the approval was applied, debited by the refund: the seller keeps nothing of it.
      const ledger = await ledgerOf(t, saleId);
      expect(ledger.entries).toBeGreaterThanOrEqual(2);
      expect(ledger.net).toBe(0);
      // And the acquirer gave the customer the whole amount back: it owes the platform nothing for this sale.
      expect(ledger.receivable).toBe(0);
      expect(await balanceOf(t, seller)).toEqual(before);
      const stopped = await subscriptionOf(t, seller, subscription.id);
      expect(stopped).toMatchObject({ status: stop === 'cancel' ? 'CANCELLED' : 'PAUSED', refundedBillings: 1, successfulBillings: 1 });
      await receiver.waitFor(() => postbackStatuses(seller, saleId).includes('ESTORNADO'));
      expect(postbackStatuses(seller, saleId)).toEqual(['EM_PROCESSAMENTO', 'PAGO', 'ESTORNADO']);
    });
  });

  it('in one billing batch, the stopped subscriptions are settled and the others charged as usual', async () => {
    const t = slowToAnswer;
    const seller = await createSeller(t);
    const subscriptions = [await subscribe(t, seller), await subscribe(t, seller), await subscribe(t, seller)];
    const billing = t.app.get(BillingService).runBilling(new Date(new Date(subscriptions[2].nextBillingDate).getTime() + 60_000), seller.id);
    const saleIds = await renewalsInFlight(t, subscriptions.map((s) => s.id));
    await waitUntil(async () => (await Promise.all(saleIds.map((id) => chargeOf(t, id)))).every((charge) => charge?.outcome === 'APPROVED'));
    await t.http.post(`/api/subscriptions/${subscriptions[0].id}/cancel`).set(seller.headers).send({}).expect(200);
    await t.http.post(`/api/subscriptions/${subscriptions[1].id}/pause`).set(seller.headers).send({}).expect(200);
    await billing;

    expect((await renewalOf(t, subscriptions[0].id)).status).toBe('ESTORNADO');
    expect((await renewalOf(t, subscriptions[1].id)).status).toBe('ESTORNADO');
    expect((await renewalOf(t, subscriptions[2].id)).status).toBe('PAGO');
    expect(await chargeOf(t, saleIds[2])).toEqual({ outcome: 'APPROVED', refunded: false });
    expect((await subscriptionOf(t, seller, subscriptions[2].id)).refundedBillings).toBe(0);
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
