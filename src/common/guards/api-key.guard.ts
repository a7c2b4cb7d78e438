import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Request } from 'express';
import { ApiKeysService } from '../../auth/api-keys.service';
import { AuthenticatedSeller, SELLER_REQUEST_KEY, VERIFIED_PAIR_KEY } from './authenticated-seller';

/** Resolves X-Api-Public-Key and X-Api-Private-Key to one seller (spec §5) or refuses the request. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly apiKeys: ApiKeysService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request & Record<string, unknown>>();
    const verified = request[VERIFIED_PAIR_KEY] as AuthenticatedSeller | undefined;
    if (verified) {
      request[SELLER_REQUEST_KEY] = verified; // checked by the rate limiter a moment ago
      return true;
    }
    const publicKey = request.header('x-api-public-key');
    const privateKey = request.header('x-api-private-key');
    const sellerId = await this.apiKeys.authenticate(publicKey, privateKey);
    const seller: AuthenticatedSeller = { id: sellerId, publicKey: publicKey as string };
    request[SELLER_REQUEST_KEY] = seller;
    return true;
  }
}
