import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsTaxDocumentNumber } from '../../common/validation/is-tax-document.validator';
import { DEFAULT_FEE_SCHEDULE, FeeScheduleKey } from '../../domain/fees';

export class SellerDocumentDto {
  @ApiProperty({ enum: ['cpf', 'cnpj'], example: 'cnpj' })
  @IsDefined()
  @IsIn(['cpf', 'cnpj'], { message: 'type must be cpf or cnpj' })
  type: 'cpf' | 'cnpj';

  @ApiProperty({ example: '11222333000181', description: 'Digits only, with valid check digits' })
  @IsDefined()
  @IsTaxDocumentNumber()
  number: string;
}

export class PermissionsDto {
  @ApiPropertyOptional({ example: true }) @IsOptional() @IsBoolean() isCreditCardAvailable?: boolean;
  @ApiPropertyOptional({ example: true }) @IsOptional() @IsBoolean() isBoletoAvailable?: boolean;
  @ApiPropertyOptional({ example: true }) @IsOptional() @IsBoolean() isPixAvailable?: boolean;
  @ApiPropertyOptional({ example: true, description: 'Cashouts allowed' }) @IsOptional() @IsBoolean() transferEnabled?: boolean;

  @ApiPropertyOptional({ example: 200, description: 'Fixed fee of one cashout, cents (the fee schedule cashoutFixedCents)' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100_000)
  transferPriceCents?: number;

  @ApiPropertyOptional({ example: false }) @IsOptional() @IsBoolean() anticipationEnabled?: boolean;

  @ApiPropertyOptional({ example: 50, description: 'Percent, 0 to 100, at most two decimals' })
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 2, allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(100)
  anticipatableVolumePercentage?: number;

  @ApiPropertyOptional({ example: 2.5, description: 'Percent, 0 to 100, at most two decimals' })
  @IsOptional()
  @IsNumber({ maxDecimalPlaces: 2, allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(100)
  anticipationPricePercent?: number;

  @ApiPropertyOptional({ example: 14 }) @IsOptional() @IsInt() @Min(0) @Max(365) minAnticipatableDays?: number;
}

/** A fee schedule override: basis points (399 = 3.99 %) or cents, never negative. */
function FeeField(unit: 'bps' | 'cents', description: string): PropertyDecorator {
  return (target: object, key: string | symbol) =>
    applyDecorators(
      ApiPropertyOptional({
        description: `${description}, ${unit === 'bps' ? 'basis points (399 = 3.99 %)' : 'cents'}`,
        example: DEFAULT_FEE_SCHEDULE[key as FeeScheduleKey],
      }),
      IsOptional(),
      IsInt(),
      Min(0),
      Max(unit === 'bps' ? 10_000 : 10_000_000),
    )(target, key);
}

/** Overrides of the fee schedule (domain/fees.ts); omitted keys keep their current value. */
export class FeesDto {
  @FeeField('bps', 'PIX sale fee') pixPercentBps?: number;
  @FeeField('cents', 'PIX sale fixed fee') pixFixedCents?: number;
  @FeeField('bps', 'Credit card sale fee') creditCardPercentBps?: number;
  @FeeField('cents', 'Credit card sale fixed fee') creditCardFixedCents?: number;
  @FeeField('bps', 'Debit card sale fee') debitCardPercentBps?: number;
  @FeeField('cents', 'Debit card sale fixed fee') debitCardFixedCents?: number;
  @FeeField('bps', 'Boleto sale fee') boletoPercentBps?: number;
  @FeeField('cents', 'Boleto sale fixed fee') boletoFixedCents?: number;
  @FeeField('bps', 'Transfer sale fee') transferPercentBps?: number;
  @FeeField('cents', 'Transfer sale fixed fee') transferFixedCents?: number;
  @FeeField('bps', 'Card reserve held in the blocked balance') cardReservePercentBps?: number;

  @ApiPropertyOptional({ description: 'Days a card reserve is held after payment', example: DEFAULT_FEE_SCHEDULE.cardReserveDays })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(365)
  cardReserveDays?: number;

  @FeeField('cents', 'Pre-chargeback fine') chargebackFineCents?: number;
  @FeeField('bps', 'Cashout variable fee') cashoutPercentBps?: number;
  @FeeField('cents', 'Cashout fixed fee') cashoutFixedCents?: number;
}

export class CreateSellerDto {
  @ApiProperty({ example: 'Loja Exemplo LTDA', description: 'Legal name' })
  @IsDefined()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'loja@example.com' })
  @IsDefined()
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({ example: '11987654321', description: 'Digits only, 10 to 13' })
  @IsOptional()
  @Matches(/^\d{10,13}$/, { message: 'phone must be 10 to 13 digits, no other characters' })
  phone?: string;

  @ApiPropertyOptional({ type: SellerDocumentDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => SellerDocumentDto)
  document?: SellerDocumentDto;

  @ApiPropertyOptional({ example: 'Loja Exemplo' })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  commercialName?: string;

  @ApiPropertyOptional({ type: PermissionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PermissionsDto)
  permissions?: PermissionsDto;
}

export class UpdateSellerDto {
  @ApiPropertyOptional({ example: false, description: 'A blocked seller is answered 403 FORBIDDEN on every API route' })
  @IsOptional()
  @IsBoolean()
  blocked?: boolean;

  @ApiPropertyOptional({ type: PermissionsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PermissionsDto)
  permissions?: PermissionsDto;

  @ApiPropertyOptional({ type: FeesDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => FeesDto)
  fees?: FeesDto;
}
