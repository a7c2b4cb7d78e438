import { Request } from 'express';
import { ApiKeysService } from '../../auth/api-keys.service';
import { AppConfig } from '../../config/app-config';
import { checkAdminToken } from '../guards/admin-token.guard';
import { AuthenticatedSeller, VERIFIED_PAIR_KEY } from '../guards/authenticated-seller';
import { LargeBodyAdmission } from './request-body';

const under = (path: string, prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

/**
 * Who may send a body larger than ANONYMOUS_BODY_LIMIT_BYTES, checked before it is read: on /api a key
 * pair that authenticates (the pair is left for the rate limiter and ApiKeyGuard, which do not query it
 * again; a wrong pair gets the guard's own 401 or 403), on /admin the operator's token (the guard's 401),
 * and the PSP's notification paths (their secret is the path). Every other route reads small bodies only.
 */
export function largeBodyAdmission(apiKeys: ApiKeysService, config: AppConfig): LargeBodyAdmission {
  const webhookPaths = new Set(Object.values(config.apiPixWebhookPaths ?? {}));
  return async (request) => {
    const path = request.path.toLowerCase(); // as Express routes it; the webhook's secret path below is exact
    if (under(path, '/api')) {
      const publicKey = request.header('x-api-public-key');
      const seller: AuthenticatedSeller = { id: await apiKeys.authenticate(publicKey, request.header('x-api-private-key')), publicKey: publicKey as string };
      (request as Request & Record<string, unknown>)[VERIFIED_PAIR_KEY] = seller;
      return true;
    }
    if (under(path, '/admin')) {
      checkAdminToken(config.adminToken, request);
      return true;
    }
    return webhookPaths.has(request.path);
  };
}
