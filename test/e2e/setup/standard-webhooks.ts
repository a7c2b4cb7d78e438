import { Webhook } from 'standardwebhooks';

/**
 * A receiver's side of Standard Webhooks, built on the maintained `standardwebhooks` library and nothing
 * of the service's: every postback secret an answer of the suite shows (seller creation, a rotation) is
 * remembered here, and every signed postback a test receiver gets must verify with one of them.
 */
const knownSecrets: string[] = [];

export function rememberPostbackSecret(secret: unknown): void {
  if (typeof secret === 'string' && secret.startsWith('whsec_') && !knownSecrets.includes(secret)) knownSecrets.push(secret);
}

/** Remembers the postbackSecret of an answer body (`{postbackSecret}` or `{data: {postbackSecret}}`). */
export function rememberSecretsOf(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const record = body as { postbackSecret?: unknown; data?: { postbackSecret?: unknown } | null };
  rememberPostbackSecret(record.postbackSecret);
  rememberPostbackSecret(record.data?.postbackSecret);
}

/** Whether `secret` verifies the request with the `standardwebhooks` library (and the event id is the body's). */
export function verifiesWith(secret: string, headers: Record<string, unknown>, rawBody: string): boolean {
  try {
    const payload = new Webhook(secret).verify(rawBody, standardHeaders(headers)) as { id?: unknown };
    return payload.id === headers['webhook-id'];
  } catch {
    return false;
  }
}

/** Null when a remembered secret verifies the postback; otherwise what is wrong. */
export function standardWebhooksViolation(headers: Record<string, unknown>, rawBody: string): string | null {
  const missing = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].filter((name) => typeof headers[name] !== 'string');
  if (missing.length > 0) return `postback without the Standard Webhooks headers ${missing.join(', ')}`;
  if (headers['webhook-id'] !== headers['x-event-id']) return 'postback whose webhook-id is not its X-Event-Id';
  for (let i = knownSecrets.length - 1; i >= 0; i -= 1) if (verifiesWith(knownSecrets[i], headers, rawBody)) return null;
  return `postback whose webhook-signature no secret the suite was shown verifies (standardwebhooks): ${String(headers['webhook-signature'])}`;
}

function standardHeaders(headers: Record<string, unknown>): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
}
