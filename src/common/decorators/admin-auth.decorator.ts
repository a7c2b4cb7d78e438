import { applyDecorators, UseFilters, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AccountExceptionFilter } from '../filters/account-exception.filter';
import { AdminTokenGuard } from '../guards/admin-token.guard';

export const ADMIN_TOKEN_SCHEME = 'adminToken';

/** An operator API controller: X-Admin-Token guard, `{error, message}` errors, grouped under Operator in Swagger. */
export function AdminApi(): ClassDecorator {
  return applyDecorators(
    ApiTags('Operator'),
    ApiSecurity(ADMIN_TOKEN_SCHEME),
    UseGuards(AdminTokenGuard),
    UseFilters(AccountExceptionFilter),
  );
}
