import { AppConfig } from '../config/app-config';
import { decryptSecret, encryptSecret, isSealedWith } from '../common/crypto/secrets';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';

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

/** Subscriptions read per batch by resealCardTokens. */
const RESEAL_BATCH = 500;

/**
 * Seals every subscription's card token again with the current ENCRYPTION_KEY (`secrets:reencrypt`, after a
 * rotation and before the old key leaves ENCRYPTION_KEYS). A token no key of the keyring opens is counted
 * and left as it is; one changed meanwhile (a renewal's NewCard, sealed with the current key) is left too.
 */
export async function resealCardTokens(subscriptions: SubscriptionsRepository, config: AppConfig): Promise<{ reencrypted: number; alreadyCurrent: number; unreadable: number }> {
  const result = { reencrypted: 0, alreadyCurrent: 0, unreadable: 0 };
  const keyring = config.encryptionKeyring;
  for (let afterId = 0; ; ) {
    const batch = await subscriptions.sealedCardTokens(afterId, RESEAL_BATCH);
    if (batch.length === 0) return result;
    for (const { id, sealed } of batch) {
      afterId = id;
      if (isSealedWith(sealed, keyring.current)) {
        result.alreadyCurrent += 1;
        continue;
      }
      let resealed: string;
      try {
        resealed = encryptSecret(decryptSecret(sealed, keyring), keyring.current);
      } catch {
        result.unreadable += 1;
        continue;
      }
      if (await subscriptions.resealCardToken(id, sealed, resealed)) result.reencrypted += 1;
      else result.alreadyCurrent += 1;
    }
  }
}
