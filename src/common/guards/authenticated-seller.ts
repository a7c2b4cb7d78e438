/** What ApiKeyGuard attaches to the request: the seller the key pair belongs to. */
export interface AuthenticatedSeller {
  id: number;
  publicKey: string;
}

export const SELLER_REQUEST_KEY = 'authenticatedSeller';
