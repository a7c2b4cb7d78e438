import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Res } from '@nestjs/common';
import { Response } from 'express';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiKeysService, Propagation } from '../auth/api-keys.service';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { ChargesService } from '../payments/charges.service';
import { AdminSaleResponse } from '../sales/dto/sale.response';
import { SalesService } from '../sales/sales.service';
import { SellerService } from '../seller/seller.service';
import { AdminSellerResponse, CreatedSellerResponse, InvitationResponse, KeyPairResponse, SettingsDto, SettingsResponse } from './dto/admin.response';
import { DisputeEventDto } from './dto/dispute-event.dto';
import { CreateSellerDto, UpdateSellerDto } from './dto/seller-input.dto';
import { SettingsService } from './settings.service';
import { ShownOnce } from '../common/decorators/shown-once.decorator';

/** The operator API of platform.md §2: sellers, key pairs, platform settings, and the disputes reported out of band. */
@Controller('admin')
@AdminApi()
export class AdminController {
  constructor(
    private readonly sellers: SellerService,
    private readonly apiKeys: ApiKeysService,
    private readonly settings: SettingsService,
    private readonly charges: ChargesService,
    private readonly sales: SalesService,
  ) {}

  @Post('sellers')
  @ShownOnce()
  @ApiOperation({ summary: 'Create a seller with its first API key pair and postback secret' })
  @ApiCreatedResponse({ type: CreatedSellerResponse })
  @ApiErrorResponses('account', ['MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'CONFLICT'])
  createSeller(@Body() body: CreateSellerDto): Promise<CreatedSellerResponse> {
    return this.sellers.create(body);
  }

  @Get('sellers/:id')
  @ApiOperation({ summary: 'Read a seller account with its fee schedule' })
  @ApiOkResponse({ type: AdminSellerResponse })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  getSeller(@Param('id', IdParamPipe) id: number): Promise<AdminSellerResponse> {
    return this.sellerWithFees(id);
  }

  @Patch('sellers/:id')
  @ApiOperation({ summary: "Block or unblock a seller, change its permissions or fees" })
  @ApiOkResponse({ type: AdminSellerResponse })
  @ApiErrorResponses('account', ['INVALID_ID', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_FOUND'])
  async updateSeller(@Param('id', IdParamPipe) id: number, @Body() body: UpdateSellerDto, @Res({ passthrough: true }) response: Response): Promise<AdminSellerResponse> {
    warnUnannounced(response, await this.sellers.update(id, body));
    return this.sellerWithFees(id);
  }

  @Post('sellers/:id/api-keys')
  @ShownOnce()
  @ApiOperation({ summary: 'Issue a new API key pair; earlier pairs keep working until revoked' })
  @ApiCreatedResponse({ type: KeyPairResponse })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  issueKeyPair(@Param('id', IdParamPipe) id: number): Promise<KeyPairResponse> {
    return this.sellers.issueKeyPair(id);
  }

  @Post('sellers/:id/invitation')
  @ShownOnce()
  @ApiOperation({ summary: "A new one-time link that sets the seller's dashboard password (expires in 72 h); every earlier unused link stops working at once (revokedInvitations says how many)" })
  @ApiCreatedResponse({ type: InvitationResponse })
  @ApiErrorResponses('account', ['INVALID_ID', 'UNAUTHORIZED', 'NOT_FOUND'])
  invite(@Param('id', IdParamPipe) id: number): Promise<InvitationResponse> {
    return this.sellers.invite(id);
  }

  @Delete('api-keys/:publicKey')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a key pair: it answers 401 from then on' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrorResponses('account', ['UNAUTHORIZED', 'NOT_FOUND'])
  async revokeKeyPair(@Param('publicKey') publicKey: string, @Res({ passthrough: true }) response: Response): Promise<void> {
    warnUnannounced(response, await this.apiKeys.revoke(publicKey));
  }

  @Get('settings')
  @ApiOperation({ summary: 'Platform settings' })
  @ApiOkResponse({ type: SettingsResponse })
  @ApiErrorResponses('account', ['UNAUTHORIZED'])
  getSettings(): Promise<SettingsResponse> {
    return this.settings.current();
  }

  @Put('settings')
  @ApiOperation({ summary: 'Turn cashouts through the API on or off for every seller' })
  @ApiOkResponse({ type: SettingsResponse })
  @ApiErrorResponses('account', ['MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED'])
  updateSettings(@Body() body: SettingsDto): Promise<SettingsResponse> {
    return this.settings.update(body);
  }

  @Post('sales/:id/events')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Record a dispute reported out of band (a chargeback from the acquirer, a MED from the PSP) on any seller’s sale',
    description:
      'The same move as the sandbox’s dispute events, on a sale of any provider (the sandbox or a real PSP): spec 3.1’s transition, its ledger postings ' +
      'and the seller’s postback. Its status line records that the operator made it, with the reason; a log line says the same. ' +
      'Answers the sale as the operator sees it: the lookup of spec 2.3 with its sellerId and status history. ' +
      'MED_LOST on a sale a real PSP holds (PIX_PROVIDER=api-pix) answers 422 NOT_SUPPORTED: the PSP’s own return of the Pix books it.',
  })
  @ApiOkResponse({ type: AdminSaleResponse, description: 'The sale after the move' })
  @ApiErrorResponses('account', ['INVALID_ID', 'MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_FOUND', 'INVALID_TRANSITION', 'NOT_SUPPORTED'])
  async recordDispute(@Param('id', IdParamPipe) id: number, @Body() body: DisputeEventDto): Promise<AdminSaleResponse> {
    await this.charges.recordDisputeEvent(id, body.event, body.reason);
    return this.sales.forOperator(id);
  }

  private async sellerWithFees(id: number): Promise<AdminSellerResponse> {
    const [account, fees] = await Promise.all([this.sellers.account(id), this.sellers.feeSchedule(id)]);
    return { ...account, fees };
  }
}

/**
 * A revocation or block saved but not announced to the other instances (Redis unreachable) is answered
 * as usual with a `Warning` header (RFC 9111 §5.5's 199, "miscellaneous warning") that says so.
 */
function warnUnannounced(response: Response, propagation: Propagation): void {
  if (!propagation.announced && propagation.warning) response.setHeader('Warning', `199 payment-gateway "${propagation.warning}"`);
}
