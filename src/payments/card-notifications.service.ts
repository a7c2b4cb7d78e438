import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ProviderIntake } from '../intake/provider-intake.service';
import { chargeReference } from '../providers/card-provider.port';
import { CARD_PAYMENT } from '../providers/cielo/cielo.notifications';
import { ProviderRegistry } from '../providers/provider-registry';
import { SalesRepository } from '../sales/sales.repository';
import { BoletoPaymentsService } from './boleto-payments.service';
import { ChargesService } from './charges.service';
import { RefundsService } from './refunds.service';

/**
 * An acquirer's notification naming a payment by its own id (`card-payment`: Cielo's PaymentId), kept by
 * the intake. The notification is a hint: the payment is fetched from the sale's acquirer
 * (CardProvider.findPayment: Cielo's `GET /1/sales/{PaymentId}`) and only what it shows moves anything:
 * a sale still EM_PROCESSAMENTO (a Pending charge) gets the charge's answer, as the janitor would apply it
 * (ChargesService); what the acquirer gave back of a paid sale beyond the refunds booked here (a void or
 * refund in its back office) is booked as a refund (RefundsService.applyAcquirerRefund), the sale
 * ESTORNADO once covered. A boleto's payment goes to BoletoPaymentsService, which asks the issuer's own
 * look-up (paid, cancelled). A payment of no sale of ours is counted and logged, and changes nothing; a
 * repeated or forged notification changes nothing more than the fetch shows.
 */
@Injectable()
export class CardNotificationsService implements OnModuleInit {
  private readonly logger = new Logger(CardNotificationsService.name);
  /** Notified payments that are no sale of this gateway's (forged, another store's, or unknown to the acquirer), by provider: acquirer_notifications_unknown_total. */
  private readonly unknown = new Map<string, number>();

  constructor(
    private readonly intake: ProviderIntake,
    private readonly providers: ProviderRegistry,
    private readonly sales: SalesRepository,
    private readonly charges: ChargesService,
    private readonly refunds: RefundsService,
    private readonly boletos: BoletoPaymentsService,
  ) {}

  onModuleInit(): void {
    this.intake.handle(CARD_PAYMENT, (provider, paymentId) => this.settle(provider, paymentId));
  }

  /** How many notified payments named no sale of ours since the start, by provider (read by the operator's metrics). */
  get unknownPayments(): ReadonlyMap<string, number> {
    return this.unknown;
  }

  async settle(provider: string, paymentId: string, now = new Date()): Promise<void> {
    const acquirer = this.providers.card(provider, `Payment ${paymentId}`);
    const payment = acquirer.findPayment ? await acquirer.findPayment(paymentId) : null;
    const saleId = payment?.reference ? Number(payment.reference) : null;
    const sale = saleId === null ? null : await this.sales.findById(saleId);
    if (payment && sale?.paymentMethod === 'BOLETO' && sale.provider === provider && (await this.boletos.settleNotified(sale, paymentId, now))) return;
    const sameCharge = !sale?.externalTransactionId || sale.externalTransactionId.toLowerCase() === paymentId.toLowerCase();
    if (!payment || !sale || sale.provider !== provider || chargeReference(sale.id) !== payment.reference || !sameCharge || (sale.paymentMethod !== 'CREDIT_CARD' && sale.paymentMethod !== 'DEBIT_CARD')) {
      this.unknown.set(provider, (this.unknown.get(provider) ?? 0) + 1);
      this.logger.warn({ provider, paymentId, found: payment !== null }, 'A notification named a payment that is no card or boleto sale of ours; nothing was done (counted in acquirer_notifications_unknown_total)');
      return;
    }
    if (sale.status === 'EM_PROCESSAMENTO' || sale.status === 'FALHA') {
      await this.charges.applyOutcomesOrEach([{ saleId: sale.id, charge: payment.charge }], now);
      return;
    }
    if (sale.status === 'PAGO' && payment.refundedCents > sale.refundedCents) await this.refunds.applyAcquirerRefund(sale.id, payment.refundedCents, paymentId, now);
  }
}
