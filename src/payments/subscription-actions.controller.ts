import { Body, Controller, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { SubscriptionsExceptionFilter } from '../common/filters/subscriptions-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { SubscriptionActionResponse } from '../subscriptions/dto/subscription.response';
import { CancelSubscriptionDto } from '../subscriptions/dto/subscription-query.dto';
import { LOOKUP_ERRORS } from '../subscriptions/subscriptions.controller';
import { SubscriptionActionsService } from './subscription-actions.service';

/** Spec 4.9-4.11: the seller's moves of a subscription; errors as `{success: false, error: {code, message}}` (spec 7.5). */
@ApiTags('Subscriptions')
@Controller('api/subscriptions')
@ApiKeyAuth()
@UseFilters(SubscriptionsExceptionFilter)
export class SubscriptionActionsController {
  constructor(private readonly subscriptions: SubscriptionActionsService) {}

  @Post(':id/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause an ACTIVE or TRIALING subscription: nothing is charged while PAUSED' })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['INVALID_STATUS', 'ALREADY_PAUSED', ...LOOKUP_ERRORS])
  async pause(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<SubscriptionActionResponse> {
    return { success: true, message: 'Subscription paused', data: await this.subscriptions.pause(seller.id, id) };
  }

  @Post(':id/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a PAUSED subscription: ACTIVE, next billing one cycle after the resume date' })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['INVALID_STATUS', ...LOOKUP_ERRORS])
  async resume(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<SubscriptionActionResponse> {
    return { success: true, message: 'Subscription resumed', data: await this.subscriptions.resume(seller.id, id) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel now (default) or at the end of the current period (cancelImmediately false)' })
  @ApiBody({ type: CancelSubscriptionDto, required: false })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['VALIDATION_ERROR', 'ALREADY_CANCELLED', 'INVALID_STATUS', ...LOOKUP_ERRORS])
  async cancel(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: CancelSubscriptionDto,
  ): Promise<SubscriptionActionResponse> {
    const immediately = body.cancelImmediately ?? true;
    const data = await this.subscriptions.cancel(seller.id, id, body.reason ?? null, immediately);
    return { success: true, message: immediately ? 'Subscription cancelled' : 'Subscription will be cancelled at the end of the current period', data };
  }
}
