import { IntakeModule } from '../intake/intake.module';
import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { LedgerModule } from '../ledger/ledger.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { ProvidersModule } from '../providers/providers.module';
import { SalesModule } from '../sales/sales.module';
import { SellerModule } from '../seller/seller.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { AutomaticPixRepository } from './automatic-pix.repository';
import { AutomaticPixService } from './automatic-pix.service';
import { BillingService } from './billing.service';
import { BoletoPaymentsRepository } from './boleto-payments.repository';
import { BoletoPaymentsService } from './boleto-payments.service';
import { BoletoReturnsController } from './boleto-returns.controller';
import { CardNotificationsService } from './card-notifications.service';
import { ChargesService } from './charges.service';
import { CardAuthenticationController } from './card-authentication.controller';
import { CheckoutService } from './checkout.service';
import { MoneyPipeline } from './money-pipeline';
import { PaymentsScheduler } from './payments.scheduler';
import { PixChargesService } from './pix-charges.service';
import { RefundsController } from './refunds.controller';
import { RefundsRepository } from './refunds.repository';
import { RefundsService } from './refunds.service';
import { SalesController } from './sales.controller';
import { SubscriptionActionsController } from './subscription-actions.controller';
import { SubscriptionActionsService } from './subscription-actions.service';

/**
 * The money wing, above sales and subscriptions (which only hold their rows and reads and never import
 * each other): the money pipeline that owns every unit of work, sale creation, the acquirer's answers
 * and the sales' scheduled work, the billing job and the seller's moves of subscriptions.
 */
@Module({
  imports: [SalesModule, SubscriptionsModule, SellerModule, LedgerModule, IdempotencyModule, ProvidersModule, NotificationsModule, IntakeModule],
  controllers: [SalesController, RefundsController, SubscriptionActionsController, CardAuthenticationController, BoletoReturnsController],
  providers: [MoneyPipeline, PixChargesService, AutomaticPixRepository, AutomaticPixService, RefundsRepository, RefundsService, CheckoutService, ChargesService, BillingService, SubscriptionActionsService, PaymentsScheduler, CardNotificationsService, BoletoPaymentsRepository, BoletoPaymentsService],
  exports: [MoneyPipeline, BoletoPaymentsService, CardNotificationsService, ChargesService, BillingService, SubscriptionActionsService, RefundsService, AutomaticPixService, AutomaticPixRepository],
})
export class PaymentsModule {}
