import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { ApiKeysService } from '../../auth/api-keys.service';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { STATUS_BY_CODE } from '../../common/filters/error-status';
import { IdParamPipe } from '../../common/pipes/id-param.pipe';
import { DomainError } from '../../domain/domain-error';
import { CreateWebhookDto } from '../../notifications/dto/webhook.dto';
import { NotificationsService } from '../../notifications/notifications.service';
import { SellerService } from '../../seller/seller.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { FormErrors, formErrorsOf, formText, NO_ERRORS, noticeOf, validated } from '../forms';

/** Notices shown after a redirect, by key (never a secret: those are shown in the answer that made them). */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['revoked', 'Par de chaves revogado. Ele responde 401 a partir de agora.'],
  ['webhook-added', 'Webhook adicionado.'],
  ['webhook-removed', 'Webhook removido.'],
  ['webhook-tested', 'Evento de teste enviado. Acompanhe a entrega no registro abaixo.'],
  ['redelivered', 'Entrega reenviada. Acompanhe no registro abaixo.'],
]);

/** How long a replaced postback secret keeps signing when the seller rolls it from the dashboard. */
const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;

/**
 * Integrations: the seller's API key pairs (generate, shown once; revoke) and notifications (withdrawal
 * webhooks, a test event, the postback secret, the deliveries log with redelivery), through the same
 * services as the operator API.
 */
@ApiExcludeController()
@Controller('dashboard/integrations')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardIntegrationsController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly sellers: SellerService,
    private readonly notifications: NotificationsService,
  ) {}

  @Get('keys')
  async keys(@CurrentUser() user: DashboardUser, @Query('notice') notice: unknown, @Res() response: Response): Promise<void> {
    response.render('keys', { pairs: await this.apiKeys.pairsOf(user.sellerId), created: null, notice: noticeOf(NOTICES, notice) });
  }

  @Post('keys')
  async generate(@CurrentUser() user: DashboardUser, @Res() response: Response): Promise<void> {
    const created = await this.sellers.issueKeyPair(user.sellerId);
    // The private key is in this answer only: it is not stored anywhere but as its hash (and, like every
    // dashboard page, the answer is sent with Cache-Control: no-store).
    response.status(201).render('keys', { pairs: await this.apiKeys.pairsOf(user.sellerId), created, notice: null });
  }

  @Get('keys/:publicKey/revoke')
  async confirmRevoke(@CurrentUser() user: DashboardUser, @Param('publicKey') publicKey: string, @Res() response: Response): Promise<void> {
    const pair = (await this.apiKeys.pairsOf(user.sellerId)).find((candidate) => candidate.publicKey === publicKey && !candidate.revokedAt);
    if (!pair) return response.status(404).render('error', { title: 'Página não encontrada', message: 'Não encontramos este par de chaves ativo nesta conta.' });
    response.render('revoke-key', { pair });
  }

  @Post('keys/:publicKey/revoke')
  async revoke(@CurrentUser() user: DashboardUser, @Param('publicKey') publicKey: string, @Res() response: Response): Promise<void> {
    await this.apiKeys.revoke(publicKey, user.sellerId);
    response.redirect(303, '/dashboard/integrations/keys?notice=revoked');
  }

  @Get('webhooks')
  async webhooks(@CurrentUser() user: DashboardUser, @Query('notice') notice: unknown, @Res() response: Response): Promise<void> {
    await this.renderWebhooks(response, user, { notice: noticeOf(NOTICES, notice) });
  }

  @Post('webhooks')
  async addWebhook(@CurrentUser() user: DashboardUser, @Req() request: Request, @Res() response: Response): Promise<void> {
    const form = { url: formText(request, 'url').trim(), type: formText(request, 'type') };
    const { value, errors } = await validated(CreateWebhookDto, form);
    let refused: FormErrors | null = errors;
    let status = 400;
    if (!refused) {
      try {
        await this.notifications.addWithdrawalWebhook(user.sellerId, value.url);
      } catch (error) {
        refused = formErrorsOf(error);
        status = STATUS_BY_CODE[(error as DomainError).code]; // 409 past WEBHOOKS_PER_SELLER_MAX
      }
    }
    if (refused) return this.renderWebhooks(response, user, { errors: refused, form }, status);
    response.redirect(303, '/dashboard/integrations/webhooks?notice=webhook-added');
  }

  @Post('webhooks/:webhookId/delete')
  async removeWebhook(@CurrentUser() user: DashboardUser, @Param('webhookId', IdParamPipe) webhookId: number, @Res() response: Response): Promise<void> {
    await this.notifications.removeWithdrawalWebhook(user.sellerId, webhookId);
    response.redirect(303, '/dashboard/integrations/webhooks?notice=webhook-removed');
  }

  @Post('webhooks/:webhookId/test')
  async testWebhook(@CurrentUser() user: DashboardUser, @Param('webhookId', IdParamPipe) webhookId: number, @Res() response: Response): Promise<void> {
    await this.manualSend(response, user, 'webhook-tested', () => this.notifications.sendTestWebhook(user.sellerId, webhookId));
  }

  @Post('postback-secret')
  async rotateSecret(@CurrentUser() user: DashboardUser, @Res() response: Response): Promise<void> {
    const rolled = await this.sellers.rotatePostbackSecret(user.sellerId, DEFAULT_SECRET_OVERLAP_SECONDS);
    await this.renderWebhooks(response, user, { postbackSecret: rolled.postbackSecret, rolled }, 201);
  }

  @Post('deliveries/:deliveryId/redeliver')
  async redeliver(@CurrentUser() user: DashboardUser, @Param('deliveryId', IdParamPipe) deliveryId: number, @Res() response: Response): Promise<void> {
    await this.manualSend(response, user, 'redelivered', () => this.notifications.redeliver(user.sellerId, deliveryId, 'seller'));
  }

  /**
   * A test event or a redelivery the seller asked for: back to the page with its notice, or, past
   * MANUAL_SENDS_PER_HOUR, the page again with 429, Retry-After and the limit's message.
   */
  private async manualSend(response: Response, user: DashboardUser, notice: string, send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'RATE_LIMITED') throw error;
      response.setHeader('Retry-After', String(error.details?.retryAfterSeconds ?? 60));
      return this.renderWebhooks(response, user, { refusal: error.message }, 429);
    }
    response.redirect(303, `/dashboard/integrations/webhooks?notice=${notice}`);
  }

  private async renderWebhooks(response: Response, user: DashboardUser, extra: Record<string, unknown>, status = 200): Promise<void> {
    const [webhooks, deliveries] = [await this.notifications.withdrawalWebhooks(user.sellerId), await this.notifications.deliveries(user.sellerId, undefined, 50)];
    response.status(status).render('webhooks', { webhooks, deliveries, errors: NO_ERRORS, form: { url: '', type: 'WITHDRAWAL' }, notice: null, refusal: null, postbackSecret: null, ...extra });
  }
}
