import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { DomainError } from '../domain/domain-error';
import { boletoReturnDueEffect, boletoReturnedEffect } from '../domain/refund-ledger';
import { Janitor } from '../janitor/janitor.service';
import { LedgerService } from '../ledger/ledger.service';
import { IssuedBoleto } from '../providers/card-provider.port';
import { ProviderRegistry } from '../providers/provider-registry';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SalesRepository } from '../sales/sales.repository';
import { BoletoPaymentsRepository, LateBoletoPayment } from './boleto-payments.repository';
import { MoneyPipeline } from './money-pipeline';

/** Boletos asked about per pass. */
const BATCH = 100;

/**
 * Boletos of a real issuer (Cielo, issue 40): paid and cancelled only on the issuer's word. Its look-up
 * (BoletoProvider.findBoleto) is asked when a notification names the boleto, and by the janitor's poll of
 * issued boletos (every CIELO_BOLETO_POLL_SECONDS each: a bank reports payment by batch, or only when
 * reconciled, and a notification can be lost). What it shows is applied in one transaction on the locked
 * sale:
 * - paid, of the sale's amount, while the sale is PENDENTE: PAGO, with its ledger posting and postbacks
 *   (what the issuer reports paid kept as the evidence ledger:verify checks);
 * - paid while the sale is CANCELADO (after the time it is cancelled at), or of another amount: booked as
 *   owed back to the payer (BOLETO_RETURN_DUE, the issuer holding the money) and listed for the operator
 *   (GET /api/admin/boleto-returns), once per sale; a PENDENTE sale paid of another amount is cancelled;
 * - cancelled at the issuer: CANCELADO;
 * - open once the sale's time to be cancelled (its due date plus CIELO_BOLETO_CLEARING_DAYS) has come:
 *   CANCELADO. A boleto is never cancelled here without its issuer saying it is not paid, and one paid
 *   after is still seen by the poll for CIELO_BOLETO_LATE_WATCH_DAYS.
 */
@Injectable()
export class BoletoPaymentsService implements OnModuleInit {
  private readonly logger = new Logger(BoletoPaymentsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly providers: ProviderRegistry,
    private readonly sales: SalesRepository,
    private readonly boletos: BoletoPaymentsRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly ledger: LedgerService,
    private readonly janitor: Janitor,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.janitor.register({ name: 'issued boletos', settle: async (sellerId, now) => ({ boletosChecked: await this.poll(sellerId, now) }) });
  }

  /** The issuers whose boletos are learned from their look-up (the configured providers with findBoleto). */
  private issuers(): string[] {
    return this.providers
      .configuredWith('boleto')
      .filter(({ adapter }) => typeof adapter.findBoleto === 'function')
      .map(({ name }) => name);
  }

  /** One pass of the poll (of one seller, or all) at `now`: how many boletos were asked about. */
  async poll(sellerId: number | null, now: Date): Promise<number> {
    const settings = this.config.cieloBoleto;
    const claimed = await this.sales.claimIssuedBoletos(sellerId, BATCH, this.issuers(), settings.pollSeconds, settings.lateWatchDays, now);
    for (const boleto of claimed) {
      try {
        const issued = await this.lookUp(boleto.provider, boleto.externalId);
        if (!issued) {
          this.logger.warn({ provider: boleto.provider, saleId: boleto.id, paymentId: boleto.externalId }, 'The issuer does not show a boleto it issued; it is asked again next period');
          continue;
        }
        await this.apply(boleto.id, boleto.provider, boleto.externalId, issued, 'POLL', now);
      } catch (error) {
        this.logger.warn({ err: error, saleId: boleto.id, provider: boleto.provider }, 'Could not ask the issuer about a boleto; asked again next period');
      }
    }
    return claimed.length;
  }

  /**
   * A notification named this boleto sale's payment at its issuer: the issuer's look-up decides. Answers
   * false when the payment is not this sale's (nothing done).
   */
  async settleNotified(sale: SaleEntity, paymentId: string, now = new Date()): Promise<boolean> {
    const issued = await this.lookUp(sale.provider, paymentId);
    if (!issued || issued.reference !== String(sale.id)) return false;
    await this.apply(sale.id, sale.provider, paymentId, issued, 'NOTIFICATION', now);
    return true;
  }

  private lookUp(provider: string, paymentId: string): Promise<IssuedBoleto | null> {
    const issuer = this.providers.boleto(provider, `Boleto ${paymentId}`);
    if (!issuer.findBoleto) throw new Error(`The provider ${provider} reports no boleto's state`);
    return issuer.findBoleto(paymentId);
  }

  /** What the issuer shows, applied to the locked sale (see the class's comment). */
  private async apply(saleId: number, provider: string, paymentId: string, issued: IssuedBoleto, seenBy: 'NOTIFICATION' | 'POLL', now: Date): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [sale] = await this.sales.findByIdsForUpdate([saleId], manager);
      if (!sale || sale.paymentMethod !== 'BOLETO' || sale.provider !== provider || sale.externalTransactionId?.toLowerCase() !== paymentId.toLowerCase()) return;
      if (issued.state === 'PAID' && issued.paidCents !== null) {
        if (sale.status === 'PENDENTE' && issued.paidCents === sale.amountCents) {
          await this.pipeline.write(manager, { sales: [{ sale, event: 'PAYMENT_CONFIRMED', extra: { providerAmountCents: issued.paidCents } }] }, now);
          return;
        }
        if (sale.status !== 'PENDENTE' && sale.status !== 'CANCELADO') return;
        const late = await this.boletos.insertLate({ saleId, sellerId: sale.sellerId, provider, paymentId, amountCents: issued.paidCents, seenBy }, manager);
        if (late === null) return;
        await this.ledger.post(manager, [{ sellerId: null, referenceType: 'SALE', referenceId: saleId, effect: boletoReturnDueEffect(issued.paidCents), provider }]);
        if (sale.status === 'PENDENTE') await this.pipeline.write(manager, { sales: [{ sale, event: 'EXPIRED' }] }, now);
        this.logger.warn(
          { saleId, provider, paymentId, paidCents: issued.paidCents, amountCents: sale.amountCents, status: sale.status },
          'A boleto was paid after its sale was cancelled, or of another amount: owed back to its payer, listed for the operator',
        );
        return;
      }
      if (sale.status !== 'PENDENTE') return;
      if (issued.state === 'CANCELLED' || (sale.expiresAt !== null && sale.expiresAt.getTime() <= now.getTime())) {
        await this.pipeline.write(manager, { sales: [{ sale, event: 'EXPIRED' }] }, now);
      }
    });
  }

  /** The late payments for the operator: still owed (returned false), returned (true), or all (null). */
  listLate(returned: boolean | null, limit: number): Promise<LateBoletoPayment[]> {
    return this.boletos.listLate(returned, limit);
  }

  /**
   * The operator returned a late payment to its payer (a bank transfer from the issuer's account, outside
   * the gateway): booked once (BOLETO_RETURNED); 409 when it was marked returned already.
   */
  async markReturned(id: number, note: string): Promise<LateBoletoPayment> {
    return this.dataSource.transaction(async (manager) => {
      const late = await this.boletos.findLateForUpdate(id, manager);
      if (!late) throw new DomainError('NOT_FOUND', `No late boleto payment ${id}`);
      if (late.returnedAt) throw new DomainError('CONFLICT', `The late boleto payment ${id} was marked returned on ${late.returnedAt.toISOString()}`);
      const returned = await this.boletos.markReturned(id, note, manager);
      await this.ledger.post(manager, [{ sellerId: null, referenceType: 'SALE', referenceId: late.saleId, effect: boletoReturnedEffect(late.amountCents), provider: late.provider }]);
      return returned;
    });
  }
}
