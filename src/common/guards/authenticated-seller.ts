/** What ApiKeyGuard attaches to the request: the seller the key pair belongs to. */
export interface AuthenticatedSeller {
  id: number;
  publicKey: string;
}

export const SELLER_REQUEST_KEY = 'authenticatedSeller';

/** Where the rate limiter leaves a key pair it has already verified, for ApiKeyGuard to use. */
export const VERIFIED_PAIR_KEY = 'verifiedKeyPair';
