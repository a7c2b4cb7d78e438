import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { automaticChargeDates, AutomaticPixJourney, journeyFor } from '../domain/automatic-pix';
import { AppConfig } from '../config/app-config';
import { addDays, addDaysToDate, boletoDueDate, endOfBrazilDay } from '../domain/dates';
import { DomainError, RequestValidationError } from '../domain/domain-error';
import { detectCardBrand } from '../domain/card';
import { cents } from '../domain/money';
import { checkPaymentPermission, checkSaleRules, DEFAULT_BOLETO_DAYS, installmentsOf, isCardMethod, payerAddressOf, withoutCardSecrets } from '../domain/sale-request';
import { addCycle, BillingCycle } from '../domain/subscription-billing';
import { IdempotencyService, IdempotentRequest, PriorUse } from '../idempotency/idempotency.service';
import { NotificationsService } from '../notifications/notifications.service';
import { BoletoRequest, chargeReference, PreparedCard } from '../providers/card-provider.port';
import { ProviderRegistry, railOf } from '../providers/provider-registry';
import { CreateSaleDto } from '../sales/dto/create-sale.dto';
import { CreateSaleResponse } from '../sales/dto/sale.response';
import { SaleEntity } from '../sales/entities/sale.entity';
import { SaleItemEntity } from '../sales/entities/sale-item.entity';
import { PixQrCodeRenderer } from '../sales/pix-qr-code-renderer';
import { toCreateSaleResponse } from '../sales/sale.presenter';
import { SalesRepository } from '../sales/sales.repository';
import { SalesProfile, SellerService } from '../seller/seller.service';
import { toSaleSubscription } from '../subscriptions/subscription.presenter';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { AutomaticPixService } from './automatic-pix.service';
import { ChargesService } from './charges.service';
import { MoneyPipeline, openedSale } from './money-pipeline';
import { PixChargesService } from './pix-charges.service';
import { callProvider } from '../providers/provider-operation';

const SCOPE = 'POST /api/sales';

export interface CreatedSale {
  status: number;
  body: CreateSaleResponse;
  replayed: boolean;
}

/** What the provider gave a PIX or boleto sale before it is written. */
export type PaymentDocument = Pick<SaleEntity, 'pixCode' | 'pixReceiverKey' | 'boletoCode' | 'externalTransactionId' | 'expiresAt'> &
  Partial<Pick<SaleEntity, 'boletoDueDate' | 'boletoBarcode' | 'boletoUrl'>>;

const NO_DOCUMENT: PaymentDocument = { pixCode: null, pixReceiverKey: null, boletoCode: null, externalTransactionId: null, expiresAt: null };

/**
 * Sale creation (POST /api/sales), with the subscription a sale opens. No provider call runs inside a
 * transaction: a PIX code or boleto is asked for before the sale is written (under an id taken from the
 * sequence); a card sale is committed EM_PROCESSAMENTO first (through the money pipeline), charged with
 * its id as the provider's reference, and its answer applied in a second transaction (ChargesService).
 */
@Injectable()
export class CheckoutService {
  private readonly logger = new Logger(CheckoutService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sales: SalesRepository,
    private readonly qrCodes: PixQrCodeRenderer,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly pipeline: MoneyPipeline,
    private readonly charges: ChargesService,
    private readonly sellers: SellerService,
    private readonly idempotency: IdempotencyService,
    private readonly notifications: NotificationsService,
    private readonly pixCharges: PixChargesService,
    private readonly automaticPix: AutomaticPixService,
    private readonly providers: ProviderRegistry,
    private readonly config: AppConfig,
  ) {}

  async create(sellerId: number, request: CreateSaleDto, idempotencyKey: string | undefined): Promise<CreatedSale> {
    checkSaleRules(request);
    const idempotent = this.idempotency.prepare(sellerId, SCOPE, idempotencyKey, withoutCardSecrets(request));
    const prior = await this.idempotency.priorUse(idempotent);
    if (prior) return this.answerPriorUse(prior);
    const profile = await this.sellers.salesProfile(sellerId);
    checkPaymentPermission(request.paymentMethod, profile);
    if (request.paymentMethod === 'BOLETO' || request.paymentMethod === 'TRANSFER') this.checkBoletoRail(request);
    if (request.subscription?.automaticPix && !this.config.automaticPixAvailable) {
      throw new DomainError('FORBIDDEN', 'Pix Automático is not enabled on this gateway (its PSP account, API_PIX_RECEIVER_ACCOUNT, is not set)');
    }
    if (request.postbackUrl) await this.notifications.assertPostbackUrl(request.postbackUrl);
    return isCardMethod(request.paymentMethod)
      ? this.createCardSale(sellerId, request, profile, idempotent)
      : this.createDocumentSale(sellerId, request, profile, idempotent);
  }

  /** PIX, boleto and transfer: the provider's document first, then the sale, its key and its answer in one transaction. */
  private async createDocumentSale(sellerId: number, request: CreateSaleDto, profile: SalesProfile, idempotent: IdempotentRequest | null): Promise<CreatedSale> {
    const now = new Date();
    const saleId = await this.sales.nextId();
    const provider = this.providers.forNew(railOf(request.paymentMethod));
    const automatic = request.subscription?.enabled && request.subscription.automaticPix ? journeyFor(request.subscription.trialDays ?? 0) : null;
    // Journey 2 asks for no immediate charge: its QR only authorizes.
    const document: PaymentDocument & Partial<SaleEntity> =
      automatic === 'JOURNEY_2' ? { ...NO_DOCUMENT } : await this.paymentDocument(saleId, provider, request, profile, now);
    let written = false;
    try {
      const authorization = automatic ? await this.automaticPixAuthorization(saleId, provider, request, document, now) : null;
      const qrCode = document.pixCode ? await this.qrCodes.render(document.pixCode) : null;
      const columns = { ...this.saleColumns(sellerId, request, provider), ...document, id: saleId, status: 'PENDENTE' as const };
      if (!idempotent && !request.subscription?.enabled) {
        // Nothing to claim, open or save beside the sale: its one statement (items and first status line
        // included) is atomic by itself, without the BEGIN and COMMIT round trips of a transaction.
        const { sale } = await this.sales.insert(columns, this.itemRows(request), this.dataSource.manager);
        written = true;
        return { status: 201, body: toCreateSaleResponse(sale, qrCode), replayed: false };
      }
      const outcome = await this.dataSource.transaction(async (manager) => {
        const prior = await this.idempotency.claim(manager, idempotent);
        if (prior) return prior;
        const subscriptionId = await this.openSubscription(manager, columns, request, now, authorization);
        const { sale } = await this.sales.insert({ ...columns, ...billingColumns(subscriptionId) }, this.itemRows(request), manager);
        const body = await this.withSubscription(toCreateSaleResponse(sale, qrCode), sale, manager);
        await this.idempotency.attachResource(manager, idempotent, sale.id);
        await this.idempotency.saveResponse(manager, idempotent, 201, body);
        return body;
      });
      written = !('kind' in outcome);
      return 'kind' in outcome ? this.answerPriorUse(outcome) : { status: 201, body: outcome, replayed: false };
    } finally {
      // A PIX charge issued for a sale that was not written (a refused recurrence, a failed transaction, a
      // replay answered instead) is removed at the PSP after the fact, never inside the transaction.
      if (!written && request.paymentMethod === 'PIX') await this.pixCharges.withdraw(provider, document);
    }
  }

  /**
   * Pix Automático (issue 22): the recurrence created at the PSP for the sale, whose BR Code becomes the
   * sale's (journey 3: the composite QR that pays the charge already issued and authorizes; journey 2:
   * the QR that only authorizes, the sale being the first charge, collected when the trial ends).
   */
  private async automaticPixAuthorization(
    saleId: number,
    provider: string,
    request: CreateSaleDto,
    document: PaymentDocument & Partial<SaleEntity>,
    now: Date,
  ): Promise<{ journey: AutomaticPixJourney; recurrenceId: string }> {
    const trialDays = request.subscription?.trialDays ?? 0;
    const opened = await this.automaticPix.openAuthorization(
      {
        saleId,
        provider,
        trialDays,
        cycle: request.subscription?.billingCycle as BillingCycle,
        amountCents: cents(request.amount),
        debtor: { document: request.customer.document?.number as string, documentType: request.customer.document?.type === 'cnpj' ? 'CNPJ' : 'CPF', name: request.customer.name },
        object: request.items[0]?.title ?? 'Subscription',
      },
      now,
    );
    document.pixCode = opened.brCode;
    if (opened.journey === 'JOURNEY_2') {
      // Until the payer authorizes, the trial has not started: the first charge's date moves with it.
      const dates = automaticChargeDates(addDays(now, trialDays));
      Object.assign(document, { externalTransactionId: opened.recurrenceId, automaticPixDueDate: dates.dueDate, expiresAt: dates.expiresAt });
    }
    return { journey: opened.journey, recurrenceId: opened.recurrenceId };
  }

  /**
   * What the boleto rail's provider needs before anything is written or sent: a transfer taken by it
   * (422 NOT_SUPPORTED when it takes none: Cielo's boletos), and a boleto's payer as its bank registers
   * them (400 naming the field: customer.document, customer.address or one of its fields).
   */
  private checkBoletoRail(request: CreateSaleDto): void {
    const provider = this.providers.forNew('BOLETO');
    const issuer = this.providers.boleto(provider);
    if (request.paymentMethod === 'TRANSFER') {
      if (issuer.takesTransfers === false) throw new DomainError('NOT_SUPPORTED', `Transfers are not taken on this gateway: its bank documents are issued by ${provider}, which takes none`);
      return;
    }
    const days = request.boleto?.expiresInDays ?? DEFAULT_BOLETO_DAYS;
    if (issuer.maxDueDays !== undefined && days > issuer.maxDueDays) {
      throw new RequestValidationError(
        [],
        [
          {
            field: 'boleto.expiresInDays',
            message: `expiresInDays must be at most ${issuer.maxDueDays} when boletos are issued through ${provider}: the boleto is followed at its issuer until its due date plus the clearing days, and the issuer answers about its last three months only`,
          },
        ],
      );
    }
    const problem = issuer.boletoProblem?.({ amountCents: cents(request.amount), dueDate: '', reference: 0, payer: payerOf(request) });
    if (!problem) return;
    const payer = payerAddressOf(request);
    if (problem.field === 'customer.address') throw new RequestValidationError([], [{ field: payer.missing ?? problem.field, message: problem.message }]);
    // A field of the address the payer's was taken from (customer.address, or else shipping) is named there.
    const shipped = payer.from === 'shipping' && problem.field.startsWith('customer.address.');
    const field = shipped ? `shipping.${problem.field.slice('customer.address.'.length)}` : problem.field;
    throw new RequestValidationError([], [{ field, message: shipped ? problem.message.replaceAll('customer.address.', 'shipping.') : problem.message }]);
  }

  private async paymentDocument(saleId: number, provider: string, request: CreateSaleDto, profile: SalesProfile, now: Date): Promise<PaymentDocument> {
    const none: PaymentDocument = { ...NO_DOCUMENT };
    const amountCents = cents(request.amount);
    switch (request.paymentMethod) {
      case 'PIX': {
        const { customer } = request;
        const pix = await this.pixCharges.issue(
          saleId,
          {
            provider,
            amountCents,
            expiresAt: request.pix?.expiresInDays ? addDays(now, request.pix.expiresInDays) : null,
            receiverKey: request.pix?.key ?? null,
            profile,
            payer: { name: customer.name, documentType: customer.document?.type ?? null, documentNumber: customer.document?.number ?? null },
            description: request.items[0]?.title ?? null,
          },
          now,
        );
        return { ...none, ...pix };
      }
      case 'BOLETO': {
        const issuer = this.providers.boleto(provider);
        const due = boletoDueDate(now, request.boleto?.expiresInDays ?? DEFAULT_BOLETO_DAYS);
        const boletoRequest = { amountCents, dueDate: due.dueDate, reference: saleId, payer: payerOf(request) };
        const issued = await callProvider({ name: 'boleto', provider: () => provider, reference: () => String(saleId), call: () => issuer.createBoleto(boletoRequest) }, null);
        if (issued.kind === 'refused') throw new DomainError('PSP_REFUSED', `The boleto was not issued: ${issued.reason}`, { provider });
        if (issued.kind === 'unknown') throw new DomainError('SERVICE_UNAVAILABLE', `The boleto issuer (${provider}) did not answer; nothing was issued: try again`);
        const boleto = issued.answer;
        return {
          ...none,
          boletoCode: boleto.code,
          boletoBarcode: boleto.barcode ?? null,
          boletoUrl: boleto.url ?? null,
          boletoDueDate: due.dueDate,
          externalTransactionId: boleto.externalId,
          // A real issuer's boleto is waited for the banks' clearing days after its due date before it is cancelled.
          expiresAt: issuer.clearingDays ? endOfBrazilDay(addDaysToDate(due.dueDate, issuer.clearingDays)) : due.expiresAt,
        };
      }
      case 'TRANSFER':
        return { ...none, externalTransactionId: `trf_${saleId}` };
      case 'CREDIT_CARD':
      case 'DEBIT_CARD':
        throw new Error('A card sale is charged (createCardSale), not issued a payment document');
    }
  }

  /**
   * Card sales, in two commits around the charge: (1) the sale written EM_PROCESSAMENTO (after PENDENTE)
   * with its idempotency claim; (2) outside any transaction, the charge with the sale's id as reference;
   * (3) the answer applied and saved for replays. If (2) or (3) fails the sale stays EM_PROCESSAMENTO, the
   * request is answered with that state, and the recovery job resolves it by asking the provider.
   */
  private async createCardSale(sellerId: number, request: CreateSaleDto, profile: SalesProfile, idempotent: IdempotentRequest | null): Promise<CreatedSale> {
    const now = new Date();
    const provider = this.providers.forNew('CARD');
    const acquirer = this.providers.card(provider);
    // The card details stay in this request's memory: given to the first charge only when the acquirer
    // takes the card in the charge itself (no token), never written anywhere.
    const details = request.card as NonNullable<CreateSaleDto['card']>;
    const refusal = acquirer.unsupported?.({ paymentMethod: request.paymentMethod as 'CREDIT_CARD' | 'DEBIT_CARD', subscription: request.subscription?.enabled === true, brand: detectCardBrand(details.number) });
    if (refusal) throw new DomainError('NOT_SUPPORTED', refusal);
    const card = await acquirer.prepareCard(details);
    const opening = openedSale({ ...this.saleColumns(sellerId, request, provider), ...cardColumns(card), status: 'PENDENTE' as const }, ['SENT_TO_ACQUIRER'], profile.fees, now);
    const itemRows = this.itemRows(request);
    const written =
      !idempotent && !request.subscription?.enabled && !request.postbackUrl
        ? // Nothing to claim, open or announce beside it: the sale's one statement (its id from the
          // sequence, its status lines and items included) is atomic by itself, with no BEGIN or COMMIT.
          await this.sales.insert(opening.columns, itemRows, this.dataSource.manager, opening.history)
        : await this.dataSource.transaction(async (manager) => {
            const prior = await this.idempotency.claim(manager, idempotent);
            if (prior) return prior;
            const subscriptionId = await this.openSubscription(manager, opening.columns, request, now);
            const inserted = await this.sales.insert({ ...opening.columns, ...billingColumns(subscriptionId) }, itemRows, manager, opening.history);
            await this.idempotency.attachResource(manager, idempotent, inserted.sale.id);
            await this.pipeline.write(manager, { opened: [{ ...inserted, previous: opening.history.at(-1) ?? null }] }, now, new Map([[sellerId, profile.fees]]));
            return inserted;
          });
    if ('kind' in written) return this.answerPriorUse(written);
    const { sale: opened, items } = written;
    const answerOpened = async () => ({ status: 201, body: await this.withSubscription(toCreateSaleResponse(await this.currentOr(opened), null), opened), replayed: false });

    // The charge at the acquirer (a provider operation, src/providers/provider-operation.ts): no answer
    // leaves the sale EM_PROCESSAMENTO for the janitor, which asks the acquirer by the same reference.
    const charged = await callProvider(
      {
        name: 'card charge',
        provider: () => provider,
        reference: (sale: SaleEntity) => chargeReference(sale.id),
        call: (sale: SaleEntity) =>
          acquirer.chargeCard({
            reference: chargeReference(sale.id),
            token: card.token,
            ...(card.token === null ? { card: details } : {}),
            amountCents: sale.amountCents,
            installments: sale.installments ?? 1,
            kind: 'FIRST',
            // A card subscription's first charge keeps the card for its renewals (a trial's too: it is charged at once).
            ...(opened.subscriptionId !== null ? { saveCard: true } : {}),
            customerName: request.customer.name,
            customerDocument: request.customer.document ?? null,
            statementDescriptor: profile.invoiceDescriptor,
            method: request.paymentMethod === 'DEBIT_CARD' ? 'DEBIT_CARD' : 'CREDIT_CARD',
            ...(details.threeDSecure ? { authentication: details.threeDSecure } : {}),
          }),
      },
      opened,
    );
    // No answer, or one that is not final yet (PENDING): the sale stays EM_PROCESSAMENTO for the janitor.
    if (charged.kind !== 'answered' || charged.answer.outcome === 'PENDING') return answerOpened();
    const charge = charged.answer;
    try {
      // The answer is saved for replays, and the subscription read, in the move's transaction; with
      // neither, the move has nothing to run beside it (and may be one statement, no transaction).
      const saveAnswer =
        idempotent || opened.subscriptionId !== null
          ? async (manager: EntityManager, sales: Map<number, SaleEntity>) => {
              const moved = sales.get(opened.id) as SaleEntity;
              const answer = await this.withSubscription(toCreateSaleResponse(moved, null), moved, manager);
              await this.idempotency.saveResponse(manager, idempotent, 201, answer);
              return answer;
            }
          : undefined;
      const { sales, result } = await this.charges.applyOutcomes([{ saleId: opened.id, charge, items, sale: opened }], new Date(), new Map([[sellerId, profile.fees]]), saveAnswer);
      return { status: 201, body: result ?? toCreateSaleResponse(sales.get(opened.id) as SaleEntity, null), replayed: false };
    } catch (error) {
      this.logger.error({ err: error, saleId: opened.id }, 'Card charge answered but its outcome was not saved; the recovery job will apply it');
      return answerOpened();
    }
  }

  /** The sale as it is now (another path may have moved it), or `fallback` when it cannot be read. */
  private async currentOr(fallback: SaleEntity): Promise<SaleEntity> {
    return (await this.sales.findById(fallback.id).catch(() => null)) ?? fallback;
  }

  /** A key used before: its saved answer, or (first request between its commits) the sale as it is now. */
  private async answerPriorUse(prior: PriorUse): Promise<CreatedSale> {
    if (prior.kind === 'REPLAY') return { status: prior.status, body: prior.body as CreateSaleResponse, replayed: true };
    const sale = (await this.sales.findById(prior.resourceId)) as SaleEntity;
    return { status: 201, body: await this.withSubscription(toCreateSaleResponse(sale, null), sale), replayed: true };
  }

  /**
   * Opens the subscription (PENDING) of a sale with subscription.enabled, in the sale's transaction,
   * from the sale's columns (customer, amount, card token); its id, or null.
   */
  private async openSubscription(
    manager: EntityManager,
    sale: Partial<SaleEntity>,
    request: CreateSaleDto,
    now: Date,
    authorization: { journey: AutomaticPixJourney; recurrenceId: string } | null = null,
  ): Promise<number | null> {
    if (!request.subscription?.enabled) return null;
    const cycle = request.subscription.billingCycle as BillingCycle;
    const item = request.items[0];
    const productName = item?.title ?? 'Subscription';
    const productId = await this.subscriptions.productIdFor(sale.sellerId as number, productName, item?.productId ?? null, manager);
    return this.subscriptions.insert(
      {
        sellerId: sale.sellerId,
        status: 'PENDING',
        billingCycle: cycle,
        amountCents: sale.amountCents,
        paymentMethod: sale.paymentMethod as 'PIX' | 'CREDIT_CARD',
        // Who holds its stored card or its recurrence; a plain PIX subscription's sales each have their own.
        provider: sale.paymentMethod !== 'PIX' || authorization ? (sale.provider as string) : null,
        cardToken: sale.cardToken ?? null,
        cardLastFour: sale.cardLastFour ?? null,
        cardBrand: sale.cardBrand ?? null,
        customerName: sale.customerName,
        customerEmail: sale.customerEmail,
        customerDocumentType: (sale.customerDocumentType as 'cpf' | 'cnpj' | null | undefined) ?? null,
        customerDocument: sale.customerDocumentNumber ?? null,
        customerPhone: sale.customerPhone ?? null,
        productId,
        productName,
        metadata: {},
        postbackUrl: sale.postbackUrl ?? null,
        trialDays: request.subscription.trialDays ?? 0,
        // platform.md §7: creation + the cycle while PENDING, recomputed from the first confirmed payment.
        nextBillingDate: addCycle(now, cycle, authorization !== null),
        currentPeriod: 0,
        periodDueAt: now,
        periodAttempts: 1,
        totalBillings: 1,
        lastPaymentStatus: 'PENDENTE',
        ...(authorization
          ? { automaticPixStatus: 'PENDING' as const, automaticPixJourney: authorization.journey, automaticPixRecurrenceId: authorization.recurrenceId }
          : {}),
      },
      manager,
    );
  }

  /** The creation answer with `sale.subscription` (spec 2.5) when the sale created a subscription. */
  private async withSubscription(body: CreateSaleResponse, sale: SaleEntity, manager?: EntityManager): Promise<CreateSaleResponse> {
    if (sale.subscriptionId === null) return body;
    const subscription = await this.subscriptions.findById(sale.subscriptionId, manager);
    return subscription ? { ...body, sale: { ...body.sale, subscription: toSaleSubscription(subscription) } } : body;
  }

  private saleColumns(sellerId: number, request: CreateSaleDto, provider: string): Partial<SaleEntity> & Pick<SaleEntity, 'sellerId' | 'paymentMethod' | 'amountCents' | 'provider'> {
    const tracking = Object.fromEntries(
      (['utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm', 'src', 'sck'] as const)
        .filter((key) => request[key] !== undefined)
        .map((key) => [key, request[key] as string]),
    );
    return {
      sellerId,
      provider,
      paymentMethod: request.paymentMethod,
      amountCents: cents(request.amount),
      installments: request.paymentMethod === 'CREDIT_CARD' ? installmentsOf(request) : null,
      customerName: request.customer.name,
      customerEmail: request.customer.email,
      customerDocumentType: request.customer.document?.type ?? null,
      customerDocumentNumber: request.customer.document?.number ?? null,
      customerPhone: request.customer.phone ?? null,
      shipping: request.shipping ? { ...request.shipping } : null,
      postbackUrl: request.postbackUrl ?? null,
      tracking,
      metadata: request.metadata ?? null,
    };
  }

  private itemRows(request: CreateSaleDto): Array<Partial<SaleItemEntity>> {
    return request.items.map((item) => ({
      title: item.title,
      unitPriceCents: cents(item.unitPrice),
      quantity: item.quantity,
      tangible: item.tangible,
      productId: item.productId ?? null,
      planId: item.planId ?? null,
      planName: item.planName ?? null,
      externalId: item.id ?? null,
    }));
  }
}

function billingColumns(subscriptionId: number | null): Partial<SaleEntity> {
  return subscriptionId === null ? {} : { subscriptionId, billingPeriod: 0, billingAttempt: 0 };
}

function cardColumns(card: PreparedCard): Partial<SaleEntity> {
  return { cardToken: card.token, cardLastFour: card.lastFour, cardBrand: card.brand };
}

/** The boleto's payer as the request gives it: name, CPF/CNPJ, and the address it is registered to (customer.address, or shipping). */
function payerOf(request: CreateSaleDto): NonNullable<BoletoRequest['payer']> {
  const document = request.customer.document;
  return {
    name: request.customer.name,
    document: document?.number ? { type: document.type, number: document.number } : null,
    address: payerAddressOf(request).address,
  };
}
