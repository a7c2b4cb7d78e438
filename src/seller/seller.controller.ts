import { Controller, Get, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { AccountExceptionFilter } from '../common/filters/account-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { SellerAccountResponse } from './dto/seller-account.response';
import { SellerService } from './seller.service';

@ApiTags('Seller')
@Controller('api/seller')
@ApiKeyAuth()
@UseFilters(AccountExceptionFilter)
export class SellerController {
  constructor(private readonly sellers: SellerService) {}

  @Get()
  @ApiOperation({ summary: 'The authenticated seller account, with aggregated revenue' })
  @ApiOkResponse({ type: SellerAccountResponse })
  @ApiErrorResponses('account', ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  account(@CurrentSeller() seller: AuthenticatedSeller): Promise<SellerAccountResponse> {
    return this.sellers.account(seller.id);
  }
}
