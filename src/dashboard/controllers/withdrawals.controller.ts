import { randomUUID } from 'node:crypto';
import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CashoutService } from '../../cashout/cashout.service';
import { CreateWithdrawalDto } from '../../cashout/dto/withdrawal.dto';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { IdParamPipe } from '../../common/pipes/id-param.pipe';
import { DomainError } from '../../domain/domain-error';
import { brlInputToCents, centsToReaisNumber } from '../../domain/money';
import { PIX_KEY_TYPES } from '../../domain/pix-key';
import { BalanceService } from '../../balance/balance.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { FormErrors, formErrorsOf, formText, NO_ERRORS, validated } from '../forms';

/** Business refusals of a withdrawal that concern the amount field; the others are about the account. */
const AMOUNT_CODES = new Set(['MINIMUM_VALUE', 'MAXIMUM_VALUE', 'INSUFFICIENT_BALANCE']);

/** The seller's withdrawals: list, detail with status history, and the request form (CashoutService's rules and messages). */
@ApiExcludeController()
@Controller('dashboard/withdrawals')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardWithdrawalsController {
  constructor(
    private readonly withdrawals: CashoutService,
    private readonly balance: BalanceService,
  ) {}

  @Get()
  async list(@CurrentUser() user: DashboardUser, @Query('page') page: unknown, @Res() response: Response): Promise<void> {
    const pageNumber = typeof page === 'string' && /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1;
    response.render('withdrawals', { ...(await this.withdrawals.list(user.sellerId, pageNumber)) });
  }

  @Get('new')
  async form(@CurrentUser() user: DashboardUser, @Res() response: Response): Promise<void> {
    await this.renderForm(response, user, { amount: '', pixKey: '', pixKeyType: 'CPF' }, NO_ERRORS);
  }

  @Post()
  async request(@CurrentUser() user: DashboardUser, @Req() request: Request, @Res() response: Response): Promise<void> {
    const form = { amount: formText(request, 'amount'), pixKey: formText(request, 'pixKey').trim(), pixKeyType: formText(request, 'pixKeyType') };
    const idempotencyKey = formText(request, 'idempotencyKey');
    const amountCents = brlInputToCents(form.amount);
    if (amountCents === null || amountCents <= 0) {
      return this.renderForm(response, user, form, { fields: { amount: 'Informe um valor em reais, como 150,00.' }, form: null }, 400);
    }
    const { value, errors } = await validated(CreateWithdrawalDto, { amount: centsToReaisNumber(amountCents), pixKey: form.pixKey, pixKeyType: form.pixKeyType });
    if (errors) return this.renderForm(response, user, form, errors, 400);
    let created: { body: { id: number } };
    try {
      // The form's own key: a double submission (or a retry after a timeout) creates one withdrawal.
      created = await this.withdrawals.request(user.sellerId, value, /^[0-9a-f-]{36}$/.test(idempotencyKey) ? `dashboard:${idempotencyKey}` : undefined);
    } catch (error) {
      const refused = formErrorsOf(error);
      const code = error instanceof DomainError ? error.code : '';
      const shown: FormErrors = AMOUNT_CODES.has(code) ? { fields: { amount: refused.form ?? '' }, form: null } : refused;
      return this.renderForm(response, user, form, shown, 422);
    }
    response.redirect(303, `/dashboard/withdrawals/${created.body.id}`);
  }

  @Get(':id')
  async detail(@CurrentUser() user: DashboardUser, @Param('id', IdParamPipe) id: number, @Res() response: Response): Promise<void> {
    const withdrawal = await this.withdrawals.dashboardView(user.sellerId, id);
    response.render('withdrawal', { withdrawal, history: await this.withdrawals.statusHistory(user.sellerId, id) });
  }

  private async renderForm(response: Response, user: DashboardUser, form: Record<string, string>, errors: FormErrors, status = 200): Promise<void> {
    const balance = await this.balance.balanceOf(user.sellerId);
    response.status(status).render('withdrawal-new', { form, errors, balance, pixKeyTypes: PIX_KEY_TYPES, idempotencyKey: randomUUID() });
  }
}
