import { randomBytes } from 'node:crypto';
import { CardDetails, CardProvider, CardRefundAnswer, CardRefundRequest, ChargeRequest, PreparedCard, ChargeResult } from '../../../../src/providers/card-provider.port';
import { NotificationSource } from '../../../../src/providers/notifications.port';
import { ProviderAdapters } from '../../../../src/providers/provider-registry';

/**
 * A second sandbox acquirer, registered only by the e2e setup (issue 37): it proves a provider plugs in
 * with its own folder, one registry line (createApp's `providers`) and its configuration
 * (CARD_PROVIDER=acquirer-b). It keeps its charges and refunds in memory, by our reference, each made at
 * most once; it can lose the answer to the next charge (the charge is made, the caller gets an error), and
 * it notifies `card-charge` references at its own unguessable path.
 */
export class SecondAcquirer implements CardProvider {
  readonly name = 'acquirer-b';
  /** Every call, in order: `charge <ref>`, `find <ref>`, `void <ref>`, `refund <ref> <cents>`. */
  readonly calls: string[] = [];
  private readonly charges = new Map<string, ChargeResult & { amountCents: number }>();
  private readonly refunds = new Map<string, CardRefundAnswer>();
  private losing = 0;

  /** The next `count` charges are made but their answers lost (the caller sees a timeout). */
  loseAnswers(count: number): void {
    this.losing = count;
  }

  /** The charge made for a reference, as the acquirer holds it. */
  charge(reference: string): (ChargeResult & { amountCents: number }) | undefined {
    return this.charges.get(reference);
  }

  async prepareCard(card: CardDetails): Promise<PreparedCard> {
    return { token: `tok_b_${card.number.endsWith('0002') ? 'r' : 'a'}_${randomBytes(8).toString('hex')}`, lastFour: card.number.slice(-4), brand: 'VISA' };
  }

  async chargeCard(request: ChargeRequest): Promise<ChargeResult> {
    this.calls.push(`charge ${request.reference}`);
    let made = this.charges.get(request.reference);
    if (!made) {
      const refused = (request.token ?? '').startsWith('tok_b_r_');
      made = { outcome: refused ? 'REFUSED' : 'APPROVED', externalId: `b_${request.reference}_${randomBytes(4).toString('hex')}`, reason: refused ? 'Declined by acquirer-b' : null, amountCents: request.amountCents };
      this.charges.set(request.reference, made);
    }
    if (this.losing > 0) {
      this.losing -= 1;
      throw new Error('acquirer-b: the answer was lost');
    }
    return answer(made);
  }

  async chargeCards(requests: ChargeRequest[]): Promise<ChargeResult[]> {
    const results: ChargeResult[] = [];
    for (const request of requests) results.push(await this.chargeCard(request));
    return results;
  }

  async findCharge(reference: string): Promise<ChargeResult | null> {
    this.calls.push(`find ${reference}`);
    const made = this.charges.get(reference);
    return made && made.externalId !== '' ? answer(made) : null;
  }

  async voidCharge(reference: string): Promise<ChargeResult | null> {
    this.calls.push(`void ${reference}`);
    const made = this.charges.get(reference);
    if (made) return made.externalId === '' ? null : answer(made);
    this.charges.set(reference, { outcome: 'FAILED', externalId: '', reason: 'Voided', amountCents: 0 });
    return null;
  }

  async refundCharge(request: CardRefundRequest): Promise<CardRefundAnswer> {
    this.calls.push(`refund ${request.reference} ${request.amountCents}`);
    const known = this.refunds.get(request.refundId);
    if (known) return known;
    const made: CardRefundAnswer = { status: 'COMPLETED', externalId: `b_rf_${request.refundId}` };
    this.refunds.set(request.refundId, made);
    return made;
  }
}

const answer = ({ outcome, externalId, reason }: ChargeResult): ChargeResult => ({ outcome, externalId, reason });

/** acquirer-b's notifications: POST <path> with `{"payments": [{"reference": "<our reference>"}]}`. */
export class SecondAcquirerNotifications implements NotificationSource {
  readonly paths: ReadonlyArray<{ path: string; kind: string }>;
  readonly inboxMax = 100;

  constructor(readonly secret: string) {
    this.paths = [{ path: `/acquirer-b/notifications/${secret}`, kind: 'card-charge' }];
  }

  parse(kind: string, body: unknown): Array<{ id: string }> | null {
    const payments = (body as { payments?: unknown } | null)?.payments;
    if (kind !== 'card-charge' || !Array.isArray(payments) || payments.length > 20) return null;
    const references = payments.map((item) => (item as { reference?: unknown } | null)?.reference);
    return references.every((reference): reference is string => typeof reference === 'string' && /^[0-9]{1,12}$/.test(reference)) ? references.map((id) => ({ id })) : null;
  }

  expected(): { title: string; detail: string } {
    return { title: 'Not an acquirer-b notification', detail: 'Expected {"payments": [{"reference": …}]}' };
  }
}

/** The registry entry of acquirer-b: its card port and its notifications. */
export function secondAcquirer(secret: string): { acquirer: SecondAcquirer; adapters: ProviderAdapters } {
  const acquirer = new SecondAcquirer();
  return { acquirer, adapters: { name: acquirer.name, card: acquirer, notifications: new SecondAcquirerNotifications(secret) } };
}
