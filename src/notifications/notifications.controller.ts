import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { CreateWebhookDto, WebhookResponse } from './dto/webhook.dto';
import { NotificationsService } from './notifications.service';

/** Operator routes for the sellers' permanent withdrawal webhooks (platform.md §2). */
@Controller('admin/sellers/:sellerId/webhooks')
@AdminApi()
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Post()
  @ApiOperation({ summary: 'Add a withdrawal webhook to a seller' })
  @ApiCreatedResponse({ type: WebhookResponse })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  add(@Param('sellerId', IdParamPipe) sellerId: number, @Body() body: CreateWebhookDto): Promise<WebhookResponse> {
    return this.notifications.addWithdrawalWebhook(sellerId, body.url);
  }

  @Get()
  @ApiOperation({ summary: "List a seller's withdrawal webhooks" })
  @ApiOkResponse({ type: WebhookResponse, isArray: true })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  list(@Param('sellerId', IdParamPipe) sellerId: number): Promise<WebhookResponse[]> {
    return this.notifications.withdrawalWebhooks(sellerId);
  }

  @Delete(':webhookId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a withdrawal webhook' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  async remove(
    @Param('sellerId', IdParamPipe) sellerId: number,
    @Param('webhookId', IdParamPipe) webhookId: number,
  ): Promise<void> {
    await this.notifications.removeWithdrawalWebhook(sellerId, webhookId);
  }
}
