import { ApiProperty } from '@nestjs/swagger';

export class SellerUserResponse {
  @ApiProperty({ example: 12 }) id: number;
  @ApiProperty({ example: 'loja@example.com' }) email: string;
  @ApiProperty({ example: '11987654321', description: 'Empty when none was given' }) phone: string;
  @ApiProperty({ example: 'Loja Exemplo' }) name: string;
  @ApiProperty({ example: false }) isEmailVerified: boolean;
  @ApiProperty({ example: false }) isPhoneVerified: boolean;
  @ApiProperty({ example: false }) isAdmin: boolean;
  @ApiProperty({ example: false }) isMaster: boolean;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
}

export class SellerDocumentResponse {
  @ApiProperty({ example: 12 }) id: number;
  @ApiProperty({ example: '11222333000181' }) number: string;
  @ApiProperty({ example: 'cnpj', enum: ['cpf', 'cnpj'] }) type: 'cpf' | 'cnpj';
}

export class SellerPermissionsResponse {
  @ApiProperty({ example: true }) isCreditCardAvailable: boolean;
  @ApiProperty({ example: true }) isBoletoAvailable: boolean;
  @ApiProperty({ example: true }) isPixAvailable: boolean;
  @ApiProperty({ example: true, description: 'Cashouts to a PIX key allowed' }) transferEnabled: boolean;
  @ApiProperty({ example: 200, description: 'Fixed fee of one cashout, cents' }) transferPriceCents: number;
  @ApiProperty({ example: false }) anticipationEnabled: boolean;
  @ApiProperty({ example: 0, description: 'Percent' }) anticipatableVolumePercentage: number;
  @ApiProperty({ example: 0, description: 'Percent' }) anticipationPricePercent: number;
  @ApiProperty({ example: 0 }) minAnticipatableDays: number;
}

export class SellerDetailsResponse {
  @ApiProperty({ example: 5000000, description: 'Cents per month; 0 when not declared' }) averageRevenue: number;
  @ApiProperty({ example: 15000, description: 'Cents; 0 when not declared' }) averageTicket: number;
  @ApiProperty({ example: false, description: 'false when not declared' }) physicalProducts: boolean;
  @ApiProperty({ example: 'Cursos online', description: 'Empty when not declared' }) productsDescription: string;
  @ApiProperty({ example: 'https://loja.example.com', description: 'Empty when not declared' }) siteUrl: string;
  @ApiProperty({ example: '11987654321', description: "The account's phone unless another was declared; empty when none" }) phone: string;
  @ApiProperty({ example: 'contato@loja.example.com', description: "The account's email unless another was declared" }) email: string;
}

export class SellerAddressResponse {
  @ApiProperty({ example: 'Avenida Paulista', description: 'Empty when not given' }) street: string;
  @ApiProperty({ example: '1000' }) streetNumber: string;
  @ApiProperty({ example: '01310100' }) zipCode: string;
  @ApiProperty({ example: 'Bela Vista' }) neighborhood: string;
  @ApiProperty({ example: 'São Paulo' }) city: string;
  @ApiProperty({ example: 'SP' }) state: string;
  @ApiProperty({ example: 'br' }) country: string;
}

export class SellerRevenueResponse {
  @ApiProperty({ example: 0, description: 'Cents, sales PAGO now' }) totalAmount: number;
  @ApiProperty({ example: 0 }) totalCount: number;
  @ApiProperty({ example: 0, description: 'Cents' }) cardAmount: number;
  @ApiProperty({ example: 0 }) cardCount: number;
  @ApiProperty({ example: 0, description: 'Cents' }) pixAmount: number;
  @ApiProperty({ example: 0 }) pixCount: number;
  @ApiProperty({ example: 0, description: 'Cents' }) boletoAmount: number;
  @ApiProperty({ example: 0 }) boletoCount: number;
  @ApiProperty({ example: 0, description: 'Cents, chargebacks confirmed' }) chargebackAmount: number;
  @ApiProperty({ example: 0 }) chargebackCount: number;
  @ApiProperty({ example: 0, description: 'Cents, sales refunded' }) refundAmount: number;
  @ApiProperty({ example: 0 }) refundCount: number;
}

export class RecipientDocumentResponse {
  @ApiProperty({ example: '11222333000181', description: 'Empty when the seller has no document' }) number: string;
  @ApiProperty({ example: 'cnpj', enum: ['cpf', 'cnpj', ''], description: 'Empty when the seller has no document' }) type: 'cpf' | 'cnpj' | '';
}

export class TransferSettingsResponse {
  @ApiProperty({ example: 'PIX', description: 'How cashouts are paid out' }) method: 'PIX';
  @ApiProperty({ example: true, description: 'Cashouts allowed (permissions.transferEnabled)' }) transferEnabled: boolean;
  @ApiProperty({ example: false, description: 'Automatic periodic transfers (not offered: always false)' })
  automaticTransfer: boolean;
  @ApiProperty({ example: 200, description: 'Fixed fee of one cashout, cents' }) feeFixedCents: number;
  @ApiProperty({ example: 0, description: 'Variable fee of one cashout, percent' }) feePercent: number;
  @ApiProperty({ example: '100.00', description: 'Smallest cashout, reais' }) minimumAmount: string;
  @ApiProperty({ example: '100000.00', description: 'Largest cashout, reais' }) maximumAmount: string;
}

export class RecipientBalanceResponse {
  @ApiProperty({ example: 0, description: 'Cents' }) available: number;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) updatedAt: string;
}

export class DefaultRecipientResponse {
  @ApiProperty({ example: 12 }) id: number;
  @ApiProperty({ example: 'Loja Exemplo LTDA' }) legalName: string;
  @ApiProperty({ type: RecipientDocumentResponse }) document: RecipientDocumentResponse;
  @ApiProperty({ type: TransferSettingsResponse }) transferSettings: TransferSettingsResponse;
  @ApiProperty({ type: RecipientBalanceResponse }) balance: RecipientBalanceResponse;
}

/** The seller account of spec 2.9. */
export class SellerAccountResponse {
  @ApiProperty({ example: 12 }) id: number;
  @ApiProperty({ example: 12, description: 'Equal to id' }) userId: number;
  @ApiProperty({ example: 'Loja Exemplo LTDA' }) legalName: string;
  @ApiProperty({ example: false }) blocked: boolean;
  @ApiProperty({ example: 'LOJAEXEMPLO' }) invoiceDescriptor: string;
  @ApiProperty({ example: 'Loja Exemplo', nullable: true, type: String }) commercialName: string | null;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: false }) uploadedDocuments: boolean;
  @ApiProperty({ type: SellerUserResponse }) user: SellerUserResponse;
  @ApiProperty({ type: SellerDocumentResponse, nullable: true }) document: SellerDocumentResponse | null;
  @ApiProperty({ type: SellerPermissionsResponse }) permissions: SellerPermissionsResponse;
  @ApiProperty({ type: SellerDetailsResponse }) details: SellerDetailsResponse;
  @ApiProperty({ nullable: true, type: Object, example: null, description: 'Not registered yet: always null' })
  legalRepresentative: null;
  @ApiProperty({ type: SellerAddressResponse, nullable: true }) address: SellerAddressResponse | null;
  @ApiProperty({ type: SellerRevenueResponse }) revenue: SellerRevenueResponse;
  @ApiProperty({ type: DefaultRecipientResponse }) defaultRecipient: DefaultRecipientResponse;
}
