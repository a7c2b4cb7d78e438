import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { ApiKeyGuard } from '../guards/api-key.guard';
import { RateLimitPer } from './rate-limit.decorator';

export const PUBLIC_KEY_SCHEME = 'publicKey';
export const PRIVATE_KEY_SCHEME = 'privateKey';

/** Guards a controller or route with the seller's API key pair, counts it in the seller's rate limit budget, and documents both headers. */
export function ApiKeyAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    UseGuards(ApiKeyGuard),
    RateLimitPer('seller'),
    ApiSecurity({ [PUBLIC_KEY_SCHEME]: [], [PRIVATE_KEY_SCHEME]: [] }),
  );
}
