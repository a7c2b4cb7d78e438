import { centsToReaisString } from '../domain/money';
import { announcedWithdrawalStatus } from '../domain/withdrawal-status';
import { WithdrawalLookupResponse, WithdrawalResponse } from './dto/withdrawal.dto';
import { WithdrawalEntity } from './entities/withdrawal.entity';

/** Spec 2.10: reais as decimal strings; the creation answer has no updatedAt. */
export function toWithdrawal(withdrawal: WithdrawalEntity): WithdrawalResponse {
  return {
    id: withdrawal.id,
    amount: centsToReaisString(withdrawal.amountCents),
    netAmount: centsToReaisString(withdrawal.netAmountCents),
    pixKey: withdrawal.pixKey,
    pixKeyType: withdrawal.pixKeyType,
    status: withdrawal.status,
    createdAt: withdrawal.createdAt.toISOString(),
    fees: {
      fixed: centsToReaisString(withdrawal.feeFixedCents),
      variable: centsToReaisString(withdrawal.feeVariableCents),
      total: centsToReaisString(withdrawal.feeTotalCents),
    },
  };
}

export function toWithdrawalLookup(withdrawal: WithdrawalEntity): WithdrawalLookupResponse {
  return { ...toWithdrawal(withdrawal), updatedAt: withdrawal.updatedAt.toISOString() };
}

/** The withdrawal webhook body of spec 6.2. */
export function toWithdrawalWebhook(withdrawal: WithdrawalEntity, user: { id: number; name: string; email: string }): Record<string, unknown> {
  return {
    id: withdrawal.id,
    userId: withdrawal.sellerId,
    amount: centsToReaisString(withdrawal.amountCents),
    pixKey: withdrawal.pixKey,
    pixKeyType: withdrawal.pixKeyType,
    status: announcedWithdrawalStatus(withdrawal.status),
    externalId: withdrawal.externalId,
    createdAt: withdrawal.createdAt.toISOString(),
    updatedAt: withdrawal.updatedAt.toISOString(),
    processedAt: withdrawal.processedAt?.toISOString() ?? null,
    user,
    type: 'WITHDRAWAL',
  };
}
