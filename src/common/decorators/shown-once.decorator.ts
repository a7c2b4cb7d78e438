import { applyDecorators, Header } from '@nestjs/common';

/**
 * A route whose answer holds a secret shown this once (a key pair, a postback secret, an invitation
 * link): `Cache-Control: no-store`, so that no browser, proxy or client cache keeps a copy of it.
 */
export function ShownOnce(): MethodDecorator {
  return applyDecorators(Header('Cache-Control', 'no-store'));
}
