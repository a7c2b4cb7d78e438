import { Controller, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { SalesExceptionFilter } from '../common/filters/sales-exception.filter';
import { DomainError } from '../domain/domain-error';
import { ThreeDSecureNotOfferedError } from '../providers/card-provider.port';
import { ProviderRefusedError } from '../providers/provider-operation';
import { ProviderRegistry } from '../providers/provider-registry';
import { ThreeDSecureTokenResponse } from './dto/three-d-secure-token.response';

/**
 * Debit's 3-D Secure 2.2 (issue 39): the seller's back end asks here for the access token its checkout page
 * gives Cielo's `BP.Mpi` script; the script's answer (cavv, eci, version, referenceId) comes back in the
 * sale's `card.threeDSecure`. Errors in the sales family's shape.
 */
@ApiTags('Sales')
@Controller('api/cards')
@ApiKeyAuth()
@UseFilters(SalesExceptionFilter)
export class CardAuthenticationController {
  constructor(private readonly providers: ProviderRegistry) {}

  @Post('3ds-token')
  @HttpCode(200)
  @ApiOperation({
    summary: "An access token for Cielo's 3-D Secure script on your checkout page",
    description:
      'Ask for one per checkout load (the token is single use) from your back end, put it in the bpmpi_accesstoken element, ' +
      "load scriptUrl and call bpmpi_authenticate(); send onSuccess's Cavv, Eci, Version and ReferenceId (and Xid if any) as card.threeDSecure " +
      'with the DEBIT_CARD sale. Under the sandbox acquirer the token is a placeholder and no script runs.',
  })
  @ApiResponse({ status: 200, type: ThreeDSecureTokenResponse })
  @ApiErrorResponses('sales', ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_SUPPORTED', 'PSP_REFUSED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'])
  async token(): Promise<ThreeDSecureTokenResponse> {
    const acquirer = this.providers.card(this.providers.forNew('CARD'));
    if (!acquirer.threeDSecureToken) throw new DomainError('NOT_SUPPORTED', 'The card acquirer of this gateway offers no 3-D Secure');
    try {
      const token = await acquirer.threeDSecureToken();
      return { accessToken: token.accessToken, expiresAt: token.expiresAt.toISOString(), environment: token.environment, scriptUrl: token.scriptUrl };
    } catch (error) {
      if (error instanceof ThreeDSecureNotOfferedError) throw new DomainError('NOT_SUPPORTED', error.message);
      if (error instanceof ProviderRefusedError) throw new DomainError('PSP_REFUSED', error.message);
      throw new DomainError('SERVICE_UNAVAILABLE', "Cielo's 3-D Secure service did not answer; try again");
    }
  }
}
