import { AppConfig } from '../config/app-config';
import { decryptSecret, encryptSecret } from '../common/crypto/secrets';

/**
 * A stored card's token as its subscription keeps it (`subscriptions.card_token_sealed`): sealed with
 * ENCRYPTION_KEY like every secret the service reads back (AES-256-GCM, common/crypto/secrets.ts), opened
 * with the keyring only for the call that charges it. An acquirer's token (Cielo's CardToken) charges
 * the card without its CVV: never in clear at rest, never logged.
 */
export function sealCardToken(token: string, config: AppConfig): string {
  return encryptSecret(token, config.encryptionKey);
}

/** The token a subscription's renewals are charged with: its sealed token opened, or the sandbox's own token (kept as it is). */
export function cardTokenOf(subscription: { cardTokenSealed?: string | null; cardToken?: string | null }, config: AppConfig): string | null {
  if (subscription.cardTokenSealed) return decryptSecret(subscription.cardTokenSealed, config.encryptionKeyring);
  return subscription.cardToken ?? null;
}
