import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { LEDGER_ENTRY_KINDS } from '../../domain/ledger';
import { PageLimit } from '../../common/validation/query-integers';

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** GET /api/public/balance/statement. */
export class StatementQueryDto {
  @ApiPropertyOptional({ example: '2026-11-01', description: 'YYYY-MM-DD, Brazil time (UTC-3): movements on or after that day' })
  @IsOptional()
  @Matches(DATE, { message: 'from must be a date YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-30', description: 'YYYY-MM-DD, Brazil time (UTC-3): movements on or before that day' })
  @IsOptional()
  @Matches(DATE, { message: 'to must be a date YYYY-MM-DD' })
  to?: string;

  @ApiPropertyOptional({ description: "The previous page's nextCursor" })
  @IsOptional()
  @IsString({ message: 'cursor must be the nextCursor of a previous page' })
  @MaxLength(200, { message: 'cursor must be the nextCursor of a previous page' })
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;

  @PageLimit(200, 50)
  limit?: number;
}

export class StatementReference {
  @ApiProperty({ example: 'SALE', enum: ['SALE', 'WITHDRAWAL'] }) type: 'SALE' | 'WITHDRAWAL';
  @ApiProperty({ example: 1234, description: 'The sale (GET /api/transactions/{id}) or withdrawal (GET /api/public/cashout/{id})' }) id: number;
}

/** One movement of the seller's balance. */
export class StatementLine {
  @ApiProperty({ example: 5821 }) id: number;
  @ApiProperty({ example: '2026-11-22T13:00:05.123Z' }) createdAt: string;
  @ApiProperty({ example: 'SALE_PAID', enum: LEDGER_ENTRY_KINDS, description: 'What moved it: a sale paid, a reserve released, a dispute, a refund, a withdrawal' })
  kind: string;
  @ApiProperty({ type: StatementReference }) reference: StatementReference;
  @ApiProperty({ example: 8606, description: 'Change of available, cents' }) available: number;
  @ApiProperty({ example: 956, description: 'Change of blocked, cents' }) blocked: number;
  @ApiProperty({ example: 125000, description: 'Available after this movement, cents' }) availableAfter: number;
  @ApiProperty({ example: 15000, description: 'Blocked after this movement, cents' }) blockedAfter: number;
}

export class StatementResponse {
  @ApiProperty({ type: StatementLine, isArray: true, description: 'Newest first' }) statement: StatementLine[];
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Pass as cursor for the next (older) page; null on the last one' })
  nextCursor: string | null;
}
