import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { IdParamPipe } from '../../common/pipes/id-param.pipe';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription-status';
import { CancelSubscriptionDto, SubscriptionQueryDto } from '../../subscriptions/dto/subscription-query.dto';
import { SubscriptionActionsService } from '../../payments/subscription-actions.service';
import { SubscriptionsService } from '../../subscriptions/subscriptions.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { FormErrors, formErrorsOf, formText, NO_ERRORS, noticeOf, validated } from '../forms';

const FILTER_FIELDS = ['status', 'search', 'startDate', 'endDate'] as const;

/** Notices shown after a redirect, by key. */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['paused', 'Assinatura pausada: nada é cobrado enquanto estiver pausada.'],
  ['resumed', 'Assinatura retomada.'],
  ['cancelled', 'Assinatura cancelada.'],
  ['scheduled', 'Cancelamento agendado para o fim do período atual.'],
]);

/** The seller's subscriptions: list with metrics, detail, pause, resume and cancel (SubscriptionsService's rules and messages). */
@ApiExcludeController()
@Controller('dashboard/subscriptions')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardSubscriptionsController {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly actions: SubscriptionActionsService,
  ) {}

  @Get()
  async list(@CurrentUser() user: DashboardUser, @Query() raw: Record<string, unknown>, @Res() response: Response): Promise<void> {
    const filters = Object.fromEntries(FILTER_FIELDS.map((field) => [field, typeof raw[field] === 'string' ? raw[field] : '']));
    const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== '')).toString();
    const base = { filters, query, statuses: SUBSCRIPTION_STATUSES, metrics: await this.subscriptions.metrics(user.sellerId) };
    const empty = (status: number) => (value: { errors: FormErrors }) => response.status(status).render('subscriptions', { ...base, subscriptions: [], pagination: null, ...value });
    const plain = Object.fromEntries(Object.entries({ ...filters, page: raw.page }).filter(([, value]) => value !== '' && value !== undefined));
    const { value, errors } = await validated(SubscriptionQueryDto, plain);
    if (errors) return empty(200)({ errors });
    try {
      response.render('subscriptions', { ...base, errors: NO_ERRORS, ...(await this.subscriptions.list(user.sellerId, value)) });
    } catch (error) {
      empty(200)({ errors: formErrorsOf(error) });
    }
  }

  @Get(':id')
  async detail(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number, @Query('notice') notice: unknown, @Res() response: Response): Promise<void> {
    await this.renderDetail(response, user, id, NO_ERRORS, noticeOf(NOTICES, notice));
  }

  @Post(':id/pause')
  async pause(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number, @Res() response: Response): Promise<void> {
    await this.act(response, user, id, 'paused', () => this.actions.pause(user.sellerId, id));
  }

  @Post(':id/resume')
  async resume(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number, @Res() response: Response): Promise<void> {
    await this.act(response, user, id, 'resumed', () => this.actions.resume(user.sellerId, id));
  }

  @Post(':id/cancel')
  async cancel(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number, @Req() request: Request, @Res() response: Response): Promise<void> {
    const immediately = formText(request, 'when') !== 'end-of-period';
    const { value, errors } = await validated(CancelSubscriptionDto, { reason: formText(request, 'reason') || undefined, cancelImmediately: immediately });
    if (errors) return this.renderDetail(response, user, id, errors, null, 400);
    await this.act(response, user, id, immediately ? 'cancelled' : 'scheduled', async () => {
      const result = await this.actions.cancel(user.sellerId, id, value.reason ?? null, immediately);
      return result.status === 'CANCELLED' ? 'cancelled' : 'scheduled';
    });
  }

  /** Runs a move; redirects to the subscription with its notice, or shows the service's refusal above the actions. */
  private async act(response: Response, user: DashboardUser, id: number, notice: string, move: () => Promise<unknown>): Promise<void> {
    let outcome: unknown;
    try {
      outcome = await move();
    } catch (error) {
      return this.renderDetail(response, user, id, formErrorsOf(error), null, 400);
    }
    response.redirect(303, `/dashboard/subscriptions/${id}?notice=${typeof outcome === 'string' ? outcome : notice}`);
  }

  private async renderDetail(response: Response, user: DashboardUser, id: number, errors: FormErrors, notice: string | null, status = 200): Promise<void> {
    const subscription = await this.subscriptions.get(user.sellerId, id);
    response.status(status).render('subscription', { subscription, errors, notice });
  }
}
