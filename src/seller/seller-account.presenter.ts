import { BalanceView } from '../balance/balance.service';
import { WITHDRAWAL_MAXIMUM_CENTS, WITHDRAWAL_MINIMUM_CENTS } from '../domain/withdrawal-limits';
import { FeeSchedule } from '../domain/fees';
import { basisPoints, basisPointsToPercent, centsToReaisString } from '../domain/money';
import { SellerAccountResponse } from './dto/seller-account.response';
import { SellerAddress, SellerEntity } from './entities/seller.entity';
import { RevenueCounters } from '../sales/revenue/sales-revenue.service';

/** The seller account of spec 2.9 from its row, balance, revenue and fee schedule. */
export function toSellerAccount(
  seller: SellerEntity,
  balance: BalanceView,
  revenue: RevenueCounters,
  fees: FeeSchedule,
): SellerAccountResponse {
  const createdAt = seller.createdAt.toISOString();
  const document =
    seller.documentType && seller.documentNumber
      ? { id: seller.id, number: seller.documentNumber, type: seller.documentType }
      : null;
  return {
    id: seller.id,
    userId: seller.id,
    legalName: seller.legalName,
    blocked: seller.blocked,
    invoiceDescriptor: seller.invoiceDescriptor,
    commercialName: seller.commercialName,
    createdAt,
    uploadedDocuments: seller.uploadedDocuments,
    user: {
      id: seller.id,
      email: seller.email,
      phone: seller.phone ?? '',
      name: seller.name,
      isEmailVerified: seller.isEmailVerified,
      isPhoneVerified: seller.isPhoneVerified,
      isAdmin: seller.isAdmin,
      isMaster: seller.isMaster,
      createdAt,
    },
    document,
    permissions: {
      isCreditCardAvailable: seller.isCreditCardAvailable,
      isBoletoAvailable: seller.isBoletoAvailable,
      isPixAvailable: seller.isPixAvailable,
      transferEnabled: seller.transferEnabled,
      transferPriceCents: fees.cashoutFixedCents,
      anticipationEnabled: seller.anticipationEnabled,
      anticipatableVolumePercentage: basisPointsToPercent(basisPoints(seller.anticipatableVolumeBps)),
      anticipationPricePercent: basisPointsToPercent(basisPoints(seller.anticipationPriceBps)),
      minAnticipatableDays: seller.minAnticipatableDays,
    },
    // Spec 2.9 types none of these "or null": what the seller has not told us is empty, zero or false.
    details: {
      averageRevenue: seller.details.averageRevenue ?? 0,
      averageTicket: seller.details.averageTicket ?? 0,
      physicalProducts: seller.details.physicalProducts ?? false,
      productsDescription: seller.details.productsDescription ?? '',
      siteUrl: seller.details.siteUrl ?? '',
      phone: seller.details.phone ?? seller.phone ?? '',
      email: seller.details.email ?? seller.email,
    },
    legalRepresentative: null,
    address: seller.address && addressOf(seller.address),
    revenue,
    defaultRecipient: {
      id: seller.id,
      legalName: seller.legalName,
      document: { number: seller.documentNumber ?? '', type: seller.documentType ?? '' },
      transferSettings: {
        method: 'PIX',
        transferEnabled: seller.transferEnabled,
        automaticTransfer: false,
        feeFixedCents: fees.cashoutFixedCents,
        feePercent: basisPointsToPercent(fees.cashoutPercentBps),
        minimumAmount: centsToReaisString(WITHDRAWAL_MINIMUM_CENTS),
        maximumAmount: centsToReaisString(WITHDRAWAL_MAXIMUM_CENTS),
      },
      balance: { available: balance.availableCents, updatedAt: balance.updatedAt.toISOString() },
    },
  };
}

/** Spec 2.9's address: an object or null; each of its fields a string, empty when not given. */
function addressOf(address: SellerAddress): Record<keyof SellerAddress, string> {
  return {
    street: address.street ?? '',
    streetNumber: address.streetNumber ?? '',
    zipCode: address.zipCode ?? '',
    neighborhood: address.neighborhood ?? '',
    city: address.city ?? '',
    state: address.state ?? '',
    country: address.country ?? '',
  };
}
