import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AuthenticatedSeller, SELLER_REQUEST_KEY } from '../guards/authenticated-seller';

/** The seller resolved by ApiKeyGuard. */
export const CurrentSeller = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedSeller =>
    context.switchToHttp().getRequest<Record<string, AuthenticatedSeller>>()[SELLER_REQUEST_KEY],
);
