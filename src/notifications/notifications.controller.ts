import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { SellerService } from '../seller/seller.service';
import { DeliveriesQueryDto, DeliveryResponse, PostbackSecretResponse } from './dto/deliveries.dto';
import { CreateWebhookDto, WebhookResponse } from './dto/webhook.dto';
import { RollSecretDto } from './dto/events.dto';
import { NotificationsService } from './notifications.service';
import { ShownOnce } from '../common/decorators/shown-once.decorator';

/** Operator routes of notifications (platform.md §2, §5): withdrawal webhooks, deliveries, the postback secret. */
@Controller('admin/sellers/:sellerId')
@AdminApi()
export class NotificationsController {
  constructor(
    private readonly notifications: NotificationsService,
    private readonly sellers: SellerService,
  ) {}

  @Post('webhooks')
  @ApiOperation({ summary: 'Add a withdrawal webhook to a seller (at most WEBHOOKS_PER_SELLER_MAX; 409 past it)' })
  @ApiCreatedResponse({ type: WebhookResponse })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'])
  addWebhook(@Param('sellerId', IdParamPipe) sellerId: number, @Body() body: CreateWebhookDto): Promise<WebhookResponse> {
    return this.notifications.addWithdrawalWebhook(sellerId, body.url);
  }

  @Get('webhooks')
  @ApiOperation({ summary: "List a seller's withdrawal webhooks" })
  @ApiOkResponse({ type: WebhookResponse, isArray: true })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  listWebhooks(@Param('sellerId', IdParamPipe) sellerId: number): Promise<WebhookResponse[]> {
    return this.notifications.withdrawalWebhooks(sellerId);
  }

  @Delete('webhooks/:webhookId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a withdrawal webhook' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  async removeWebhook(@Param('sellerId', IdParamPipe) sellerId: number, @Param('webhookId', IdParamPipe) webhookId: number): Promise<void> {
    await this.notifications.removeWithdrawalWebhook(sellerId, webhookId);
  }

  @Get('deliveries')
  @ApiOperation({ summary: "A seller's postback and webhook deliveries, newest first, with every try" })
  @ApiOkResponse({ type: DeliveryResponse, isArray: true })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  deliveries(@Param('sellerId', IdParamPipe) sellerId: number, @Query() query: DeliveriesQueryDto): Promise<DeliveryResponse[]> {
    return this.notifications.deliveries(sellerId, query.status, query.limit ?? 50);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a delivery again now, with a fresh retry schedule' })
  @ApiAcceptedResponse({ description: 'Queued' })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  async redeliver(@Param('sellerId', IdParamPipe) sellerId: number, @Param('deliveryId', IdParamPipe) deliveryId: number): Promise<void> {
    await this.notifications.redeliver(sellerId, deliveryId);
  }

  @Post('postback-secret')
  @ShownOnce()
  @ApiOperation({
    summary: "Rotate the seller's postback secret: the new one signs from now on, the replaced one beside it for overlapHours (default 24; 0 for a leak)",
  })
  @ApiCreatedResponse({ type: PostbackSecretResponse })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  async rotateSecret(@Param('sellerId', IdParamPipe) sellerId: number, @Body() body: RollSecretDto): Promise<PostbackSecretResponse> {
    const rolled = await this.sellers.rotatePostbackSecret(sellerId, Math.round((body.overlapHours ?? 24) * 3600));
    return { ...rolled, previousSecretExpiresAt: rolled.previousSecretExpiresAt?.toISOString() ?? null };
  }
}
