import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsCardNumber } from '../../common/validation/is-card-number.validator';
import { IsTaxDocumentNumber } from '../../common/validation/is-tax-document.validator';
import { MaxJsonSize } from '../../common/validation/max-json-size.validator';

export const PAYMENT_METHODS = ['CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'PIX', 'TRANSFER'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
export const BILLING_CYCLES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY', 'SEMIANNUAL', 'YEARLY'] as const;

/** Largest sale: R$ 10,000,000.00, in cents. */
export const MAXIMUM_SALE_CENTS = 1_000_000_000;

const isCard = (method: unknown) => method === 'CREDIT_CARD' || method === 'DEBIT_CARD';

export class CustomerDocumentDto {
  @ApiProperty({ enum: ['cpf', 'cnpj'], example: 'cpf' })
  @IsDefined()
  @IsIn(['cpf', 'cnpj'], { message: 'type must be cpf or cnpj' })
  type: 'cpf' | 'cnpj';

  @ApiProperty({ example: '52998224725', description: 'Digits only, with valid check digits' })
  @IsDefined()
  @IsTaxDocumentNumber()
  number: string;
}

/**
 * The payer's address (an extension of spec 2.1): the banks register a boleto to its payer's name, CPF/CNPJ
 * and address, so a boleto issued through a real issuer (BOLETO_PROVIDER=cielo) needs it, here or in
 * `shipping`. Never shown back; sent to the issuer only.
 */
export class CustomerAddressDto {
  @ApiPropertyOptional({ example: 'Avenida Paulista' }) @IsOptional() @IsString() @MaxLength(200) street?: string;
  @ApiPropertyOptional({ example: '1000' }) @IsOptional() @IsString() @MaxLength(20) streetNumber?: string;
  @ApiPropertyOptional({ example: 'Apto 12' }) @IsOptional() @IsString() @MaxLength(100) complement?: string;

  @ApiPropertyOptional({ example: '01310100', description: '8 digits' })
  @IsOptional()
  @Matches(/^\d{8}$/, { message: 'zipCode must be 8 digits' })
  zipCode?: string;

  @ApiPropertyOptional({ example: 'Bela Vista' }) @IsOptional() @IsString() @MaxLength(100) neighborhood?: string;
  @ApiPropertyOptional({ example: 'São Paulo' }) @IsOptional() @IsString() @MaxLength(100) city?: string;

  @ApiPropertyOptional({ example: 'SP', description: '2 upper-case letters' })
  @IsOptional()
  @Matches(/^[A-Z]{2}$/, { message: 'state must be 2 upper-case letters' })
  state?: string;
}

export class CustomerDto {
  @ApiProperty({ example: 'João da Silva' })
  @IsDefined()
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'joao@example.com' })
  @IsDefined()
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({ type: CustomerDocumentDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => CustomerDocumentDto)
  document?: CustomerDocumentDto;

  @ApiPropertyOptional({ example: '11987654321', description: 'Digits only, 10 to 13 (a 55 country prefix is allowed)' })
  @IsOptional()
  @Matches(/^\d{10,13}$/, { message: 'phone must be 10 to 13 digits, no other characters' })
  phone?: string;

  @ApiPropertyOptional({
    type: CustomerAddressDto,
    description: "The payer's address. Required for BOLETO when boletos are issued through a bank (BOLETO_PROVIDER=cielo), unless `shipping` holds a full one; not kept, sent to the issuer only",
  })
  @IsOptional()
  @IsObject({ message: 'address must be an object' })
  @ValidateNested()
  @Type(() => CustomerAddressDto)
  address?: CustomerAddressDto;
}

/**
 * What Cielo's 3-D Secure 2.2 script (`BP.Mpi`, run by the seller's checkout page with the token of
 * POST /api/cards/3ds-token) gives on `onSuccess` (../shared/reference/cielo-ecommerce-3.0.md §8.3–8.4):
 * required for DEBIT_CARD, optional for CREDIT_CARD. Passed to the acquirer as its external
 * authentication; never stored.
 */
export class ThreeDSecureDto {
  @ApiProperty({ example: 'AAABB2gHA1B5EFNjWQcDAAAAAAA=', description: 'The authentication value (Cavv), base64' })
  @IsDefined()
  @Matches(/^[A-Za-z0-9+/=_-]{1,64}$/, { message: 'cavv must be the 3-D Secure authentication value, 1 to 64 base64 characters' })
  cavv: string;

  @ApiPropertyOptional({ example: null, description: 'Xid (3-D Secure 1 only; often empty in 2.x)' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/=_-]{1,64}$/, { message: 'xid must be 1 to 64 base64 characters' })
  xid?: string;

  @ApiProperty({ example: '05', description: 'The ECI: 05 or 06 (Visa, Elo, Amex), 02 or 01 (Mastercard) for an authenticated cardholder' })
  @IsDefined()
  @Matches(/^[0-9]{1,2}$/, { message: 'eci must be one or two digits' })
  eci: string;

  @ApiProperty({ example: '2', description: 'The 3-D Secure version (2 for 3-D Secure 2.x)' })
  @IsDefined()
  @Matches(/^[12](\.[0-9]{1,2}){0,2}$/, { message: 'version must be a 3-D Secure version such as 2 or 2.2.0' })
  version: string;

  @ApiProperty({ example: 'a24a5d87-b1a1-4aef-a37b-2f30b91274e6', description: 'The authentication ReferenceId' })
  @IsDefined()
  @Matches(/^[A-Za-z0-9-]{1,64}$/, { message: 'referenceId must be 1 to 64 letters, digits or hyphens' })
  referenceId: string;
}

export class CardDto {
  @ApiProperty({ example: '4111111111111111', description: 'Never stored: only the last four digits, the brand and (where the acquirer keeps cards) its token are kept' })
  @IsDefined()
  @IsCardNumber()
  number: string;

  @ApiProperty({ example: 'JOAO DA SILVA' })
  @IsDefined()
  @IsString()
  @Length(2, 100)
  holderName: string;

  @ApiProperty({ example: '12', description: 'MM' })
  @IsDefined()
  @Matches(/^(0[1-9]|1[0-2])$/, { message: 'expirationMonth must be two digits, 01 to 12' })
  expirationMonth: string;

  @ApiProperty({ example: '2030', description: 'YYYY' })
  @IsDefined()
  @Matches(/^20\d{2}$/, { message: 'expirationYear must be four digits, 20YY' })
  expirationYear: string;

  @ApiProperty({ example: '123', description: 'Never stored nor logged' })
  @IsDefined()
  @Matches(/^\d{3,4}$/, { message: 'cvv must be 3 or 4 digits' })
  cvv: string;

  @ApiPropertyOptional({ example: 1, description: 'Alias of installments.number; credit card only, 1 to 12' })
  @IsOptional()
  @IsInt({ message: 'installments must be an integer between 1 and 12' })
  @Min(1, { message: 'installments must be an integer between 1 and 12' })
  @Max(12, { message: 'installments must be an integer between 1 and 12' })
  installments?: number;

  @ApiPropertyOptional({
    type: ThreeDSecureDto,
    description: 'The 3-D Secure 2.2 authentication of the cardholder: required for DEBIT_CARD (online debit must be authenticated), optional for CREDIT_CARD',
  })
  @IsOptional()
  @IsObject({ message: 'threeDSecure must be an object' })
  @ValidateNested()
  @Type(() => ThreeDSecureDto)
  threeDSecure?: ThreeDSecureDto;
}

export class PixOptionsDto {
  @ApiPropertyOptional({ example: 'loja@example.com', description: "Receiver's PIX key written in the BR Code (default: the gateway's key)" })
  @IsOptional()
  @IsString()
  @Length(1, 77)
  key?: string;

  @ApiPropertyOptional({ example: 1, description: 'Days until the PIX expires; without it, no expiry' })
  @IsOptional()
  @IsInt({ message: 'expiresInDays must be an integer between 1 and 365' })
  @Min(1, { message: 'expiresInDays must be an integer between 1 and 365' })
  @Max(365, { message: 'expiresInDays must be an integer between 1 and 365' })
  expiresInDays?: number;
}

export class BoletoOptionsDto {
  @ApiPropertyOptional({ example: 3, description: 'Days until the due date; default 3' })
  @IsOptional()
  @IsInt({ message: 'expiresInDays must be an integer between 1 and 365' })
  @Min(1, { message: 'expiresInDays must be an integer between 1 and 365' })
  @Max(365, { message: 'expiresInDays must be an integer between 1 and 365' })
  expiresInDays?: number;
}

export class ItemDto {
  @ApiProperty({ example: 'Curso de fotografia' })
  @IsDefined()
  @IsString()
  @Length(1, 255)
  title: string;

  @ApiProperty({ example: 9990, description: 'Cents' })
  @IsDefined()
  @IsInt({ message: 'unitPrice must be an integer number of cents' })
  @Min(0)
  @Max(MAXIMUM_SALE_CENTS)
  unitPrice: number;

  @ApiProperty({ example: 1 })
  @IsDefined()
  @IsInt()
  @Min(1)
  @Max(100_000)
  quantity: number;

  @ApiProperty({ example: false, description: 'true for physical goods (then shipping is required)' })
  @IsDefined()
  @IsBoolean()
  tangible: boolean;

  @ApiPropertyOptional({ example: 42 }) @IsOptional() @IsInt() @Min(1) @Max(2_147_483_647) productId?: number;
  @ApiPropertyOptional({ example: 'plan_gold' }) @IsOptional() @IsString() @MaxLength(100) planId?: string;
  @ApiPropertyOptional({ example: 'Plano Ouro' }) @IsOptional() @IsString() @MaxLength(255) planName?: string;
  @ApiPropertyOptional({ example: 'sku-123', description: 'Your own item id' }) @IsOptional() @IsString() @MaxLength(100) id?: string;
}

/** Spec 2.1's shipping address: the payer's address fields (CustomerAddressDto) and a country. */
export class ShippingDto extends CustomerAddressDto {
  @ApiPropertyOptional({ example: 'br', description: '2 letters' })
  @IsOptional()
  @Matches(/^[A-Za-z]{2}$/, { message: 'country must be 2 letters' })
  country?: string;
}

export class InstallmentsDto {
  @ApiPropertyOptional({ example: 3, description: '1 to 12; credit card only' })
  @IsOptional()
  @IsInt({ message: 'installments must be an integer between 1 and 12' })
  @Min(1, { message: 'installments must be an integer between 1 and 12' })
  @Max(12, { message: 'installments must be an integer between 1 and 12' })
  number?: number;
}

export class SubscriptionRequestDto {
  @ApiProperty({ example: true })
  @IsDefined()
  @IsBoolean()
  enabled: boolean;

  @ApiProperty({ enum: BILLING_CYCLES, example: 'MONTHLY' })
  @IsDefined()
  @IsIn(BILLING_CYCLES, { message: `billingCycle must be one of: ${BILLING_CYCLES.join(', ')}` })
  billingCycle: (typeof BILLING_CYCLES)[number];

  @ApiPropertyOptional({ example: 7, description: '0 to 90, default 0' })
  @IsOptional()
  @IsInt({ message: 'trialDays must be an integer between 0 and 90' })
  @Min(0, { message: 'trialDays must be an integer between 0 and 90' })
  @Max(90, { message: 'trialDays must be an integer between 0 and 90' })
  trialDays?: number;

  @ApiPropertyOptional({
    example: false,
    description:
      'PIX only: Pix Automático. The customer authorizes the recurrence once in their bank app and every renewal is collected without a new QR code. ' +
      'Without trialDays the QR pays the first charge and authorizes together (journey 3); with trialDays it only authorizes, and the first charge is collected when the trial ends (journey 2). ' +
      'Needs customer.document and a cycle other than BIWEEKLY. Default false.',
  })
  @IsOptional()
  @IsBoolean({ message: 'automaticPix must be a boolean' })
  automaticPix?: boolean;
}

/** A campaign-tracking string, valid for every payment method. */
function Tracking(example: string): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ example, maxLength: 255 }), IsOptional(), IsString(), MaxLength(255));
}

/** POST /api/sales (spec 2.1, platform.md §7). */
export class CreateSaleDto {
  @ApiProperty({ example: 9990, description: 'Cents; at least 100 (smaller positive amounts: 422 MINIMUM_AMOUNT)' })
  @IsDefined()
  @IsInt({ message: 'amount must be an integer number of cents' })
  @Min(1, { message: 'amount must be a positive integer number of cents' })
  @Max(MAXIMUM_SALE_CENTS, { message: `amount must not be greater than ${MAXIMUM_SALE_CENTS} cents` })
  amount: number;

  @ApiProperty({ enum: PAYMENT_METHODS, example: 'PIX' })
  @IsDefined()
  @IsIn(PAYMENT_METHODS, { message: `paymentMethod must be one of: ${PAYMENT_METHODS.join(', ')}` })
  paymentMethod: PaymentMethod;

  @ApiProperty({ type: CustomerDto })
  @IsDefined()
  @IsObject({ message: 'customer must be an object' })
  @ValidateNested()
  @Type(() => CustomerDto)
  customer: CustomerDto;

  @ApiPropertyOptional({ type: CardDto, description: 'Required for CREDIT_CARD and DEBIT_CARD' })
  @ValidateIf((sale: CreateSaleDto) => isCard(sale.paymentMethod) || sale.card !== undefined)
  @IsDefined()
  @IsObject({ message: 'card must be an object' })
  @ValidateNested()
  @Type(() => CardDto)
  card?: CardDto;

  @ApiPropertyOptional({ type: PixOptionsDto, description: 'Required for PIX; {} is valid' })
  @ValidateIf((sale: CreateSaleDto) => sale.paymentMethod === 'PIX' || sale.pix !== undefined)
  @IsDefined()
  @IsObject({ message: 'pix must be an object' })
  @ValidateNested()
  @Type(() => PixOptionsDto)
  pix?: PixOptionsDto;

  @ApiPropertyOptional({ type: BoletoOptionsDto, description: 'Required for BOLETO; {} is valid' })
  @ValidateIf((sale: CreateSaleDto) => sale.paymentMethod === 'BOLETO' || sale.boleto !== undefined)
  @IsDefined()
  @IsObject({ message: 'boleto must be an object' })
  @ValidateNested()
  @Type(() => BoletoOptionsDto)
  boleto?: BoletoOptionsDto;

  @ApiProperty({ type: ItemDto, isArray: true })
  @IsDefined()
  @IsArray({ message: 'items must be an array' })
  @ArrayMinSize(1, { message: 'items must hold at least one item' })
  @ArrayMaxSize(100, { message: 'items must hold at most 100 items' })
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  items: ItemDto[];

  @ApiPropertyOptional({ type: ShippingDto, description: 'Required when any item is tangible' })
  @ValidateIf((sale: CreateSaleDto) => (Array.isArray(sale.items) && sale.items.some((item) => item?.tangible === true)) || sale.shipping !== undefined)
  @IsDefined()
  @IsObject({ message: 'shipping must be an object' })
  @ValidateNested()
  @Type(() => ShippingDto)
  shipping?: ShippingDto;

  @ApiPropertyOptional({ type: InstallmentsDto, description: 'Credit card only' })
  @IsOptional()
  @IsObject({ message: 'installments must be an object' })
  @ValidateNested()
  @Type(() => InstallmentsDto)
  installments?: InstallmentsDto;

  @ApiPropertyOptional({ example: 'https://loja.example.com/postbacks', description: 'http or https URL that receives status changes' })
  @IsOptional()
  @MaxLength(2048)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: 'postbackUrl must be an http or https URL' })
  postbackUrl?: string;

  @Tracking('google') utmSource?: string;
  @Tracking('cpc') utmMedium?: string;
  @Tracking('black-friday') utmCampaign?: string;
  @Tracking('banner-1') utmContent?: string;
  @Tracking('curso') utmTerm?: string;
  @Tracking('instagram') src?: string;
  @Tracking('abc123') sck?: string;

  @ApiPropertyOptional({ example: { orderId: 'A-1001' }, description: 'Free JSON object, up to 16 KB' })
  @IsOptional()
  @IsObject({ message: 'metadata must be a JSON object' })
  @MaxJsonSize(16_384)
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ type: SubscriptionRequestDto })
  @IsOptional()
  @IsObject({ message: 'subscription must be an object' })
  @ValidateNested()
  @Type(() => SubscriptionRequestDto)
  subscription?: SubscriptionRequestDto;
}
