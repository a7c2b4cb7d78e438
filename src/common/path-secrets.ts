/**
 * The secret segments of providers' notification paths (each NotificationSource's `secret`: whoever has
 * one can make the service call that provider), masked in every log line and metric label. The intake
 * adds each configured provider's when the application starts, before any request is served.
 */
const secrets = new Set<string>();

export function addPathSecret(secret: string | null): void {
  if (secret && secret.length >= 8) secrets.add(secret);
}

/** `text` with every known path secret replaced by `replacement`. */
export function maskPathSecrets(text: string, replacement: string): string {
  let masked = text;
  for (const secret of secrets) if (masked.includes(secret)) masked = masked.split(secret).join(replacement);
  return masked;
}
