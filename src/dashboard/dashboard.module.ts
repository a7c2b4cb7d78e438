import { Module } from '@nestjs/common';
import { BalanceModule } from '../balance/balance.module';
import { CashoutModule } from '../cashout/cashout.module';
import { SalesRevenueModule } from '../sales/revenue/sales-revenue.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { SalesModule } from '../sales/sales.module';
import { SellerModule } from '../seller/seller.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { PaymentsModule } from '../payments/payments.module';
import { UsersModule } from '../users/users.module';
import { DashboardAuthController } from './controllers/auth.controller';
import { DashboardDeliveriesController } from './controllers/deliveries.controller';
import { DashboardIntegrationsController } from './controllers/integrations.controller';
import { DashboardOverviewController } from './controllers/overview.controller';
import { DashboardSalesController } from './controllers/sales.controller';
import { DashboardSubscriptionsController } from './controllers/subscriptions.controller';
import { DashboardWithdrawalsController } from './controllers/withdrawals.controller';
import { DashboardStatementController } from './controllers/statement.controller';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { LoginLimiter } from './login-limiter';
import { DashboardSessionStore } from './session-store';

/**
 * The seller dashboard (/dashboard): server-rendered pages over the same services as the API, so that
 * no rule exists twice. It owns only sessions and sign-in limits; everything it shows or changes goes
 * through the owning module's service.
 */
@Module({
  imports: [SellerModule, UsersModule, BalanceModule, SalesRevenueModule, SalesModule, NotificationsModule, CashoutModule, SubscriptionsModule, PaymentsModule],
  controllers: [
    DashboardAuthController,
    DashboardOverviewController,
    DashboardSalesController,
    DashboardIntegrationsController,
    DashboardDeliveriesController,
    DashboardWithdrawalsController,
    DashboardStatementController,
    DashboardSubscriptionsController,
  ],
  providers: [DashboardSessionStore, LoginLimiter, DashboardAuthGuard],
})
export class DashboardModule {}
