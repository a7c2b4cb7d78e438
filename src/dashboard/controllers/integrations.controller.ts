import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { ApiKeysService } from '../../auth/api-keys.service';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { STATUS_BY_CODE } from '../../common/filters/error-status';
import { IdParamPipe } from '../../common/pipes/id-param.pipe';
import { DomainError } from '../../domain/domain-error';
import { CreateWebhookDto } from '../../notifications/dto/webhook.dto';
import { EventsService } from '../../notifications/events.service';
import { NotificationsService } from '../../notifications/notifications.service';
import { SellerService } from '../../seller/seller.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { failingEndpointsOf } from '../failing-endpoints';
import { FormErrors, formErrorsOf, formText, limitedSend, NO_ERRORS, noticeOf, validated } from '../forms';

/** Notices shown after a redirect, by key (never a secret: those are shown in the answer that made them). */
const NOTICES: ReadonlyMap<string, string> = new Map([
  ['revoked', 'Par de chaves revogado. Ele responde 401 a partir de agora.'],
  ['webhook-added', 'Webhook adicionado.'],
  ['webhook-removed', 'Webhook removido.'],
  ['webhook-tested', 'Evento de teste enviado. Acompanhe a entrega na página de entregas.'],
  ['previous-secret-expired', 'O segredo anterior foi expirado: só o atual assina a partir de agora.'],
  ['no-previous-secret', 'Nenhum segredo anterior ainda assinava.'],
]);

/** The overlaps the roll form offers, in hours (the events API allows any up to 7 days); 24 h by default. */
export const SECRET_OVERLAP_HOURS = [0, 1, 24, 72, 168] as const;
const DEFAULT_SECRET_OVERLAP_HOURS = 24;

/**
 * Integrations: the seller's API key pairs (generate, shown once; revoke) and notifications (withdrawal
 * webhooks, a test event, the postback secret and its rotation with overlap), through the same services
 * as the operator API. The deliveries themselves are DashboardDeliveriesController's.
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
    private readonly events: EventsService,
  ) {}

  @Get('keys')
  async keys(@CurrentUser() user: DashboardUser, @Query('notice') notice: unknown, @Res() response: Response): Promise<void> {
    response.render('keys', { pairs: await this.apiKeys.pairsOf(user.sellerId), created: null, notice: noticeOf(NOTICES, notice), failingEndpoints: await failingEndpointsOf(this.events, user.sellerId) });
  }

  @Post('keys')
  async generate(@CurrentUser() user: DashboardUser, @Res() response: Response): Promise<void> {
    const created = await this.sellers.issueKeyPair(user.sellerId);
    // The private key is in this answer only: it is not stored anywhere but as its hash (and, like every
    // dashboard page, the answer is sent with Cache-Control: no-store).
    response.status(201).render('keys', { pairs: await this.apiKeys.pairsOf(user.sellerId), created, notice: null, failingEndpoints: await failingEndpointsOf(this.events, user.sellerId) });
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
  async rotateSecret(@CurrentUser() user: DashboardUser, @Req() request: Request, @Res() response: Response): Promise<void> {
    const chosen = formText(request, 'overlapHours');
    const hours = chosen === '' ? DEFAULT_SECRET_OVERLAP_HOURS : Number(chosen);
    if (!(SECRET_OVERLAP_HOURS as readonly number[]).includes(hours)) {
      const errors = { fields: { overlapHours: `Escolha ${SECRET_OVERLAP_HOURS.join(', ')} horas.` }, form: 'Corrija os campos indicados.' };
      return this.renderWebhooks(response, user, { secretErrors: errors }, 400);
    }
    const rolled = await this.sellers.rotatePostbackSecret(user.sellerId, hours * 3600);
    // The new secret is in this answer only (sealed at rest, never shown again; the page is no-store).
    await this.renderWebhooks(response, user, { postbackSecret: rolled.postbackSecret, rolled }, 201);
  }

  @Post('postback-secret/expire-previous')
  async expirePreviousSecret(@CurrentUser() user: DashboardUser, @Res() response: Response): Promise<void> {
    const expired = await this.sellers.expirePreviousPostbackSecret(user.sellerId);
    response.redirect(303, `/dashboard/integrations/webhooks?notice=${expired ? 'previous-secret-expired' : 'no-previous-secret'}`);
  }

  /** A test event the seller asked for: back to the page with its notice, or the page again with 429 past MANUAL_SENDS_PER_HOUR. */
  private async manualSend(response: Response, user: DashboardUser, notice: string, send: () => Promise<void>): Promise<void> {
    const sent = await limitedSend(response, async () => (await send(), true), (refusal) => this.renderWebhooks(response, user, { refusal }, 429));
    if (sent) response.redirect(303, `/dashboard/integrations/webhooks?notice=${notice}`);
  }

  private async renderWebhooks(response: Response, user: DashboardUser, extra: Record<string, unknown>, status = 200): Promise<void> {
    const webhooks = await this.notifications.withdrawalWebhooks(user.sellerId);
    const previousSecretExpiresAt = await this.sellers.previousPostbackSecretExpiry(user.sellerId);
    const failingEndpoints = await failingEndpointsOf(this.events, user.sellerId);
    response.status(status).render('webhooks', {
      webhooks,
      previousSecretExpiresAt,
      failingEndpoints,
      overlapHours: SECRET_OVERLAP_HOURS,
      defaultOverlapHours: DEFAULT_SECRET_OVERLAP_HOURS,
      errors: NO_ERRORS,
      secretErrors: NO_ERRORS,
      form: { url: '', type: 'WITHDRAWAL' },
      notice: null,
      refusal: null,
      postbackSecret: null,
      rolled: null,
      ...extra,
    });
  }
}
