import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** GET /admin/ledger/summary: a period of Brazil days, both inclusive. */
export class LedgerSummaryQueryDto {
  @ApiProperty({ example: '2026-11-01', description: 'YYYY-MM-DD, Brazil time (UTC-3): from the start of that day' })
  @Matches(DATE, { message: 'from must be a date YYYY-MM-DD' })
  from: string;

  @ApiProperty({ example: '2026-11-30', description: 'YYYY-MM-DD, Brazil time (UTC-3): to the end of that day' })
  @Matches(DATE, { message: 'to must be a date YYYY-MM-DD' })
  to: string;
}

export class ProviderFigures {
  @ApiProperty({ example: 'sandbox' }) provider: string;
  @ApiProperty({ example: 1250000, description: 'Cents the card acquirer came to owe for sales captured in the period, less what it gave back (refunds, chargebacks)' })
  acquirerReceivable: number;
  @ApiProperty({ example: 830000, description: 'Cents the PSP came to hold (PIX, boleto, transfer payments), less payouts sent and money returned' })
  pspHoldings: number;
  @ApiProperty({ example: 0, description: 'Change of the payouts in transit at the payout provider, cents' }) payoutInTransit: number;
}

export class SellersFigures {
  @ApiProperty({ example: 1800000, description: "Change of all sellers' available money, cents" }) available: number;
  @ApiProperty({ example: 95000, description: "Change of all sellers' blocked money, cents" }) blocked: number;
}

/** The platform's figures for a period, from the double-entry ledger. */
export class LedgerSummaryResponse {
  @ApiProperty({ example: '2026-11-01T03:00:00.000Z' }) from: string;
  @ApiProperty({ example: '2026-12-01T03:00:00.000Z', description: 'Exclusive' }) to: string;
  @ApiProperty({ example: 41230, description: 'Sale and cashout fees earned, cents' }) feeRevenue: number;
  @ApiProperty({ example: 1500, description: 'Pre-chargeback fines charged, cents' }) fineRevenue: number;
  @ApiProperty({ example: 438, description: 'Fees given up on refunds and lost disputes, cents' }) reversalCost: number;
  @ApiProperty({ type: ProviderFigures, isArray: true }) providers: ProviderFigures[];
  @ApiProperty({ type: SellersFigures }) sellers: SellersFigures;
  @ApiProperty({ example: 0, description: 'Sum of every entry of the period: always zero' }) balance: number;
}
