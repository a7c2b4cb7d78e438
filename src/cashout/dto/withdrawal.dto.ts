import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNumber, IsOptional, IsPositive, IsString, Length } from 'class-validator';
import { PIX_KEY_TYPES, PixKeyType } from '../../domain/pix-key';

/** POST /api/public/cashout (spec 4.5). Its schema keeps the name it was published under: generated clients keep their type's name. */
@ApiSchema({ name: 'CreateCashoutDto' })
export class CreateWithdrawalDto {
  @ApiProperty({ example: 150.5, description: 'Reais, at most two decimals; 100.00 to 100000.00' })
  @IsDefined()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'amount must be a number of reais greater than zero' })
  @IsPositive({ message: 'amount must be a number of reais greater than zero' })
  amount: number;

  @ApiProperty({ example: '52998224725', description: '8 to 77 characters, valid for pixKeyType' })
  @IsDefined()
  @IsString()
  @Length(8, 77, { message: 'pixKey must be 8 to 77 characters' })
  pixKey: string;

  @ApiPropertyOptional({ enum: PIX_KEY_TYPES, example: 'CPF', description: 'Default CPF' })
  @IsOptional()
  @IsIn(PIX_KEY_TYPES, { message: `pixKeyType must be one of: ${PIX_KEY_TYPES.join(', ')}` })
  pixKeyType?: PixKeyType;
}

export class WithdrawalFeesResponse {
  @ApiProperty({ example: '2.00', description: 'Reais' }) fixed: string;
  @ApiProperty({ example: '0.00', description: 'Reais' }) variable: string;
  @ApiProperty({ example: '2.00', description: 'Reais' }) total: string;
}

/** Spec 2.10 as answered by the creation (no updatedAt). */
export class WithdrawalResponse {
  @ApiProperty({ example: 17 }) id: number;
  @ApiProperty({ example: '150.50', description: 'Gross, reais' }) amount: string;
  @ApiProperty({ example: '148.50', description: 'After fees, reais' }) netAmount: string;
  @ApiProperty({ example: '52998224725' }) pixKey: string;
  @ApiProperty({ example: 'CPF', enum: PIX_KEY_TYPES }) pixKeyType: string;
  @ApiProperty({ example: 'PENDING', enum: ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] }) status: string;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
  @ApiProperty({ type: WithdrawalFeesResponse }) fees: WithdrawalFeesResponse;
}

/** Spec 2.10 as answered by the lookup. */
export class WithdrawalLookupResponse extends WithdrawalResponse {
  @ApiProperty({ example: '2026-11-22T13:05:00.000Z' }) updatedAt: string;
}
