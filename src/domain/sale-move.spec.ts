import { DEFAULT_FEE_SCHEDULE, saleFees } from './fees';
import { cents } from './money';
import { DISPUTE_STEPS, planOpening, planSaleMove, SaleMoveState } from './sale-move';
import { DISPUTE_SALE_EVENTS, SALE_EVENTS, SALE_STATUSES, SALE_TRANSITIONS } from './sale-status';

const now = new Date('2026-03-01T12:00:00Z');
const card: SaleMoveState = {
  status: 'EM_PROCESSAMENTO',
  paymentMethod: 'CREDIT_CARD',
  amountCents: cents(4990),
  systemFeeCents: null,
  netAmountCents: null,
  reserveAmountCents: null,
  reserveSettledAt: null,
  refundedCents: cents(0),
  refundCompletedCents: cents(0),
  disputeAmountCents: null,
  disputeNetCents: null,
};

describe('planSaleMove', () => {
  it('fixes the fees of an approved card charge, holds its reserve for cardReserveDays and credits net − reserve', () => {
    const move = planSaleMove(card, 'ACQUIRER_APPROVED', DEFAULT_FEE_SCHEDULE, now);
    // 3.99 % of 49.90 = 1.99 (half up) + 0.39 fixed = 2.38; net 47.52; reserve 10 % of net = 4.75.
    expect(move).toEqual({
      next: 'PAGO',
      columns: {
        systemFeeCents: 238,
        netAmountCents: 4752,
        reserveAmountCents: 475,
        completedAt: now,
        reserveReleaseDueAt: new Date('2026-03-31T12:00:00Z'),
        reserveSettledAt: null,
      },
      effects: [
        {
          kind: 'SALE_PAID',
          movements: [
            { account: 'AVAILABLE', amountCents: 4277 },
            { account: 'BLOCKED', amountCents: 475 },
            { account: 'FEE_REVENUE', amountCents: 238 },
            { account: 'ACQUIRER_RECEIVABLE', amountCents: -4990 },
          ],
        },
      ],
    });
  });

  it('settles at once a sale with no reserve (PIX) and moves no money on a refusal or a send to the acquirer', () => {
    const pix = planSaleMove({ ...card, status: 'PENDENTE', paymentMethod: 'PIX' }, 'PAYMENT_CONFIRMED', DEFAULT_FEE_SCHEDULE, now);
    expect(pix.columns).toMatchObject({ reserveAmountCents: 0, reserveReleaseDueAt: null, reserveSettledAt: now });
    expect(planSaleMove(card, 'ACQUIRER_REFUSED', DEFAULT_FEE_SCHEDULE, now)).toEqual({ next: 'RECUSADO', columns: {}, effects: [] });
    expect(planSaleMove(card, 'PROCESSING_FAILED', DEFAULT_FEE_SCHEDULE, now)).toEqual({ next: 'FALHA', columns: {}, effects: [] });
    expect(planSaleMove({ ...card, status: 'PENDENTE' }, 'SENT_TO_ACQUIRER', DEFAULT_FEE_SCHEDULE, now)).toEqual({ next: 'EM_PROCESSAMENTO', columns: {}, effects: [] });
  });

  it('marks the reserve settled and the reason on a reversal, debiting exactly the net amount', () => {
    const fees = saleFees(card.amountCents, 'CREDIT_CARD', DEFAULT_FEE_SCHEDULE);
    const paid: SaleMoveState = { ...card, status: 'PAGO', systemFeeCents: fees.systemFeeCents, netAmountCents: fees.netAmountCents, reserveAmountCents: fees.reserveAmountCents };
    const refund = planSaleMove(paid, 'REFUNDED', DEFAULT_FEE_SCHEDULE, now);
    expect(refund.columns).toEqual({ reversalReason: 'REFUNDED', reserveSettledAt: now });
    const seller = refund.effects.flatMap((effect) => effect.movements).filter((m) => m.account === 'AVAILABLE' || m.account === 'BLOCKED');
    expect(seller.reduce((sum, m) => sum + m.amountCents, 0)).toBe(-fees.netAmountCents);
    const released = planSaleMove({ ...paid, reserveSettledAt: now }, 'REFUNDED', DEFAULT_FEE_SCHEDULE, now);
    expect(released.columns).toEqual({ reversalReason: 'REFUNDED' });
  });

  it('follows the transition table for every (status, event) pair: refused exactly where the table has no entry', () => {
    for (const status of SALE_STATUSES) {
      for (const event of SALE_EVENTS) {
        const disputed = status === 'MED' || status === 'CHARGEBACK';
        const state = {
          ...card,
          status,
          systemFeeCents: cents(238),
          netAmountCents: cents(4752),
          reserveAmountCents: cents(475),
          disputeAmountCents: disputed ? cents(4990) : null,
          disputeNetCents: disputed ? cents(4752) : null,
        };
        const allowed = SALE_TRANSITIONS[status][event] !== undefined;
        const plan = () => planSaleMove(state, event, DEFAULT_FEE_SCHEDULE, now);
        if (!allowed) expect(plan).toThrow();
        else if (['CARD', 'ALL'].includes(SALE_TRANSITIONS[status][event]?.methods as string)) expect(plan().next).toBe(SALE_TRANSITIONS[status][event]?.to);
      }
    }
  });
});

describe('planSaleMove on a dispute (issue 35, M2 and L1)', () => {
  const seller = (effects: Array<{ movements: Array<{ account: string; amountCents: number }> }>, account: 'AVAILABLE' | 'BLOCKED') =>
    effects.flatMap((effect) => effect.movements).filter((m) => m.account === account).reduce((sum, m) => sum + m.amountCents, 0);
  // PIX 100.00 paid (net 99.01), a refund of 40.00 asked for and still pending.
  const pix: SaleMoveState = { ...card, status: 'PAGO', paymentMethod: 'PIX', amountCents: cents(10000), systemFeeCents: cents(99), netAmountCents: cents(9901), reserveAmountCents: cents(0), reserveSettledAt: now, refundedCents: cents(4000) };

  it('a MED opening records what it blocks (the net the pending refund leaves), and its close moves exactly that after the refund failed', () => {
    const opened = planSaleMove(pix, 'MED_OPENED', DEFAULT_FEE_SCHEDULE, now);
    expect(opened.columns).toEqual({ disputeAmountCents: 6000, disputeNetCents: 5941 });
    expect(seller(opened.effects, 'BLOCKED')).toBe(5941);
    // The refund fails meanwhile: refundedCents back to 0.
    const inMed: SaleMoveState = { ...pix, ...opened.columns, status: 'MED', refundedCents: cents(0) };
    const won = planSaleMove(inMed, 'MED_WON', DEFAULT_FEE_SCHEDULE, now);
    expect(won).toMatchObject({ next: 'PAGO', columns: { disputeAmountCents: null, disputeNetCents: null } });
    expect([seller(won.effects, 'BLOCKED'), seller(won.effects, 'AVAILABLE')]).toEqual([-5941, 5941]);
    const lost = planSaleMove(inMed, 'MED_LOST', DEFAULT_FEE_SCHEDULE, now);
    expect(lost.next).toBe('ESTORNADO');
    expect(lost.effects).toEqual([
      {
        kind: 'MED_LOST',
        movements: [
          { account: 'BLOCKED', amountCents: -5941 },
          { account: 'REVERSAL_COST', amountCents: -59 },
          { account: 'PSP_HOLDINGS', amountCents: 6000 },
        ],
      },
    ]);
  });

  it('a dispute closed for the seller on a sale its completed refunds cover ends it ESTORNADO (REFUNDED), its reserve back to available', () => {
    const fees = saleFees(cents(10000), 'CREDIT_CARD', DEFAULT_FEE_SCHEDULE);
    const paid: SaleMoveState = { ...card, status: 'PAGO', amountCents: cents(10000), ...fees, reserveSettledAt: null, refundedCents: cents(10000) };
    const opened = planSaleMove(paid, 'CHARGEBACK_OPENED', DEFAULT_FEE_SCHEDULE, now);
    expect(opened.columns).toEqual({ disputeAmountCents: 0, disputeNetCents: 0 });
    const inDispute: SaleMoveState = { ...paid, ...opened.columns, status: 'CHARGEBACK', refundCompletedCents: cents(10000) };
    const reversed = planSaleMove(inDispute, 'CHARGEBACK_REVERSED', DEFAULT_FEE_SCHEDULE, now);
    expect(reversed).toMatchObject({ next: 'ESTORNADO', columns: { disputeAmountCents: null, disputeNetCents: null, reversalReason: 'REFUNDED', reserveSettledAt: now } });
    expect([seller(reversed.effects, 'BLOCKED'), seller(reversed.effects, 'AVAILABLE')]).toEqual([-fees.reserveAmountCents, fees.reserveAmountCents]);
    // Still pending: PAGO again, the refund's completion moves it on.
    expect(planSaleMove({ ...inDispute, refundCompletedCents: cents(0) }, 'CHARGEBACK_REVERSED', DEFAULT_FEE_SCHEDULE, now).next).toBe('PAGO');
  });
});

describe('DISPUTE_SALE_EVENTS (the events the operator records)', () => {
  it('are exactly the events that open or close a dispute', () => {
    const disputeSteps = SALE_EVENTS.filter((event) => DISPUTE_STEPS[event] !== 'NONE');
    expect([...DISPUTE_SALE_EVENTS].sort()).toEqual([...disputeSteps].sort());
  });
});

describe('planOpening', () => {
  const newCard: Omit<SaleMoveState, 'status'> = card;

  it('writes a card sale EM_PROCESSAMENTO with PENDENTE before it, and nothing else', () => {
    expect(planOpening(newCard, ['SENT_TO_ACQUIRER'], DEFAULT_FEE_SCHEDULE, now)).toEqual({ status: 'EM_PROCESSAMENTO', columns: {}, history: ['PENDENTE'] });
  });

  it('leaves a sale opened by no event PENDENTE with no earlier status', () => {
    expect(planOpening(newCard, [], DEFAULT_FEE_SCHEDULE, now)).toEqual({ status: 'PENDENTE', columns: {}, history: [] });
  });

  it('refuses an opening move that moves money or is not in the status table', () => {
    expect(() => planOpening(newCard, ['ACQUIRER_APPROVED'], DEFAULT_FEE_SCHEDULE, now)).toThrow();
    expect(() => planOpening({ ...newCard, paymentMethod: 'PIX' }, ['SENT_TO_ACQUIRER'], DEFAULT_FEE_SCHEDULE, now)).toThrow();
  });
});
