/** Every migration, oldest first. A new migration is appended here; an applied one is never edited. */
import { CreateSellerAccounts1795355367704 } from './1795355367704-CreateSellerAccounts';
import { CreateLedger1795360000000 } from './1795360000000-CreateLedger';
import { CreateIdempotencyKeys1795360000001 } from './1795360000001-CreateIdempotencyKeys';
import { CreateSales1795360000002 } from './1795360000002-CreateSales';
import { CreateOutbox1795360000003 } from './1795360000003-CreateOutbox';
import { CreateWithdrawals1795360000004 } from './1795360000004-CreateWithdrawals';
import { AddProviderReferences1795370000000 } from './1795370000000-AddProviderReferences';
import { CreateSubscriptions1795380000000 } from './1795380000000-CreateSubscriptions';
import { AddOutboxRetentionIndex1795390000000 } from './1795390000000-AddOutboxRetentionIndex';
import { CreateDashboardAccess1795410000000 } from './1795410000000-CreateDashboardAccess';
import { AddSubscriptionBillingDueIndexes1795425000000 } from './1795425000000-AddSubscriptionBillingDueIndexes';
import { CreateSubscriptionProducts1795440000000 } from './1795440000000-CreateSubscriptionProducts';
import { AddRefundsOfStoppedSubscriptions1795450000000 } from './1795450000000-AddRefundsOfStoppedSubscriptions';
import { AddInvitationRevocation1795460000000 } from './1795460000000-AddInvitationRevocation';
import { MakeLedgerDoubleEntry1795470000000 } from './1795470000000-MakeLedgerDoubleEntry';
import { AddPixProviderAndRefunds1795480000000 } from './1795480000000-AddPixProviderAndRefunds';
import { AddAutomaticPix1795490000000 } from './1795490000000-AddAutomaticPix';
import { AddEventsApi1795500000000 } from './1795500000000-AddEventsApi';
import { AddAutomaticPixInbox1795510000000 } from './1795510000000-AddAutomaticPixInbox';
import { CoverStatementIndex1795520000000 } from './1795520000000-CoverStatementIndex';
import { CountSubscriptionsPerSeller1795530000000 } from './1795530000000-CountSubscriptionsPerSeller';
import { AddOutboxManualTry1795550000000 } from './1795550000000-AddOutboxManualTry';
import { RecordDisputedAmounts1795560000000 } from './1795560000000-RecordDisputedAmounts';
import { RecordPspReturnsAndSandboxPayments1795580000000 } from './1795580000000-RecordPspReturnsAndSandboxPayments';
import { RecordEachRecordsProvider1795590000000 } from './1795590000000-RecordEachRecordsProvider';
import { UnifyProviderInbox1795595000000 } from './1795595000000-UnifyProviderInbox';
import { AddSaleStatusChangeAudit1795600000000 } from './1795600000000-AddSaleStatusChangeAudit';
import { RecoverPayoutsByLookUp1795610000000 } from './1795610000000-RecoverPayoutsByLookUp';
import { KeepSubscriptionDocumentType1795620000000 } from './1795620000000-KeepSubscriptionDocumentType';
import { KeepPayoutEvidence1795630000000 } from './1795630000000-KeepPayoutEvidence';
import { RecordPayoutAttempts1795640000000 } from './1795640000000-RecordPayoutAttempts';
import { KeepAcquirerAnswers1795650000000 } from './1795650000000-KeepAcquirerAnswers';
import { SealStoredCardTokens1795660000000 } from './1795660000000-SealStoredCardTokens';
import { IssueBoletosThroughCielo1795670000000 } from './1795670000000-IssueBoletosThroughCielo';
import { IndexBoletoPollByState1795680000000 } from './1795680000000-IndexBoletoPollByState';

export const MIGRATIONS = [
  CreateSellerAccounts1795355367704,
  CreateLedger1795360000000,
  CreateIdempotencyKeys1795360000001,
  CreateSales1795360000002,
  CreateOutbox1795360000003,
  CreateWithdrawals1795360000004,
  AddProviderReferences1795370000000,
  CreateSubscriptions1795380000000,
  AddOutboxRetentionIndex1795390000000,
  CreateDashboardAccess1795410000000,
  AddSubscriptionBillingDueIndexes1795425000000,
  CreateSubscriptionProducts1795440000000,
  AddRefundsOfStoppedSubscriptions1795450000000,
  AddInvitationRevocation1795460000000,
  MakeLedgerDoubleEntry1795470000000,
  AddPixProviderAndRefunds1795480000000,
  AddAutomaticPix1795490000000,
  AddEventsApi1795500000000,
  AddAutomaticPixInbox1795510000000,
  CoverStatementIndex1795520000000,
  CountSubscriptionsPerSeller1795530000000,
  AddOutboxManualTry1795550000000,
  RecordDisputedAmounts1795560000000,
  RecordPspReturnsAndSandboxPayments1795580000000,
  RecordEachRecordsProvider1795590000000,
  UnifyProviderInbox1795595000000,
  AddSaleStatusChangeAudit1795600000000,
  RecoverPayoutsByLookUp1795610000000,
  KeepSubscriptionDocumentType1795620000000,
  KeepPayoutEvidence1795630000000,
  RecordPayoutAttempts1795640000000,
  KeepAcquirerAnswers1795650000000,
  SealStoredCardTokens1795660000000,
  IssueBoletosThroughCielo1795670000000,
  IndexBoletoPollByState1795680000000,
];
