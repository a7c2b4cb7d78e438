import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiKeysService, KeyPair, Propagation } from '../auth/api-keys.service';
import { BalanceService } from '../balance/balance.service';
import { decryptSecret, encryptSecret, isSealedWith, SecretUnreadableError } from '../common/crypto/secrets';
import { newPostbackSecret } from '../domain/postback-signature';
import { AppConfig } from '../config/app-config';
import { DomainError } from '../domain/domain-error';
import { FeeSchedule, FeeScheduleKey, feeScheduleWith } from '../domain/fees';
import { basisPoints, percentToBasisPoints } from '../domain/money';
import { SalesRevenueService } from '../sales/revenue/sales-revenue.service';
import { Invitation, UsersService } from '../users/users.service';
import { SellerAccountResponse } from './dto/seller-account.response';
import { SellerEntity } from './entities/seller.entity';
import { toSellerAccount } from './seller-account.presenter';
import { SellerRepository } from './seller.repository';

export interface PermissionsInput {
  isCreditCardAvailable?: boolean;
  isBoletoAvailable?: boolean;
  isPixAvailable?: boolean;
  transferEnabled?: boolean;
  transferPriceCents?: number;
  anticipationEnabled?: boolean;
  anticipatableVolumePercentage?: number;
  anticipationPricePercent?: number;
  minAnticipatableDays?: number;
}

export interface CreateSellerInput {
  name: string;
  email: string;
  phone?: string;
  document?: { type: 'cpf' | 'cnpj'; number: string };
  commercialName?: string;
  permissions?: PermissionsInput;
}

export interface UpdateSellerInput {
  blocked?: boolean;
  permissions?: PermissionsInput;
  fees?: Partial<Record<FeeScheduleKey, number>>;
}

export interface WithdrawalProfile {
  transferEnabled: boolean;
  fees: FeeSchedule;
  user: { id: number; name: string; email: string };
  /** The seller's own document, which a payout provider that checks a key's owner is given; null when it has none. */
  payee: { documentType: 'CPF' | 'CNPJ'; documentNumber: string } | null;
}

export interface SalesProfile {
  isCreditCardAvailable: boolean;
  isBoletoAvailable: boolean;
  isPixAvailable: boolean;
  /** Name and city written in PIX codes. */
  merchantName: string;
  merchantCity: string;
  /** What the buyer's card statement shows (upper-case letters, digits and spaces; an acquirer may cut it shorter). */
  invoiceDescriptor: string;
  fees: FeeSchedule;
}

/** City written in PIX codes of sellers without an address. */
const DEFAULT_MERCHANT_CITY = 'SAO PAULO';

export interface RotatedPostbackSecret {
  postbackSecret: string;
  /** Until when the replaced secret still signs; null when it stopped at once. */
  previousSecretExpiresAt: Date | null;
  /** Whether a secret still in an earlier rotation's window was expired by this one. */
  expiredEarlierSecret: boolean;
}

export interface CreatedSeller {
  seller: SellerAccountResponse;
  credentials: KeyPair;
  postbackSecret: string;
  /** The one-time link that sets the dashboard password of the seller's user (expires in 72 h). */
  invitation: Invitation;
}

/** The statement descriptor: the commercial name (or name) in upper-case ASCII letters and digits. */
function invoiceDescriptorFor(name: string): string {
  const ascii = name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase().replace(/[^A-Z0-9 ]/g, '');
  return (ascii.replace(/\s+/g, ' ').trim() || 'GATEWAY').slice(0, 22);
}

@Injectable()
export class SellerService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sellers: SellerRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly balance: BalanceService,
    private readonly revenue: SalesRevenueService,
    private readonly users: UsersService,
    private readonly config: AppConfig,
  ) {}

  /** Creates the seller, its zero balance, its first key pair and its dashboard user with an invitation, in one transaction. */
  async create(input: CreateSellerInput): Promise<CreatedSeller> {
    if (await this.sellers.emailTaken(input.email)) {
      throw new DomainError('CONFLICT', `A seller with the e-mail ${input.email} already exists`);
    }
    const postbackSecret = newPostbackSecret();
    const { sellerId, credentials, invitation } = await this.dataSource.transaction(async (manager) => {
      const seller = await this.sellers.insert(
        {
          name: input.name,
          email: input.email,
          phone: input.phone ?? null,
          legalName: input.name,
          commercialName: input.commercialName ?? null,
          invoiceDescriptor: invoiceDescriptorFor(input.commercialName ?? input.name),
          documentType: input.document?.type ?? null,
          documentNumber: input.document?.number ?? null,
          postbackSecretEncrypted: encryptSecret(postbackSecret, this.config.encryptionKey),
          feeOverrides: this.feeOverridesWith({}, input.permissions),
          ...this.permissionColumns(input.permissions ?? {}),
        },
        manager,
      );
      await this.balance.open(seller.id, manager);
      const invitation = await this.users.createWithInvitation(manager, seller.id, input.email);
      return { sellerId: seller.id, credentials: await this.apiKeys.issue(seller.id, manager), invitation };
    }).catch((error: unknown) => {
      if ((error as { code?: string }).code === '23505') {
        throw new DomainError('CONFLICT', `A seller with the e-mail ${input.email} already exists`);
      }
      throw error;
    });
    return { seller: await this.account(sellerId), credentials, postbackSecret, invitation };
  }

  /** A new one-time invitation link for the seller's dashboard user (a lost or expired one, or a forgotten password). */
  async invite(sellerId: number): Promise<Invitation> {
    const seller = await this.require(sellerId);
    return this.users.invite(sellerId, seller.email);
  }

  /** The seller's name, e-mail and blocked flag (the dashboard's header and its access check). */
  /** Those of these sellers that are blocked now. */
  async blockedAmong(sellerIds: number[]): Promise<ReadonlySet<number>> {
    return new Set(await this.sellers.blockedAmong([...new Set(sellerIds)]));
  }

  async identity(sellerId: number): Promise<{ id: number; name: string; email: string; blocked: boolean }> {
    const seller = await this.require(sellerId);
    return { id: seller.id, name: seller.commercialName ?? seller.name, email: seller.email, blocked: seller.blocked };
  }

  async account(sellerId: number): Promise<SellerAccountResponse> {
    const seller = await this.require(sellerId);
    const [balance, revenue] = await Promise.all([this.balance.balanceOf(sellerId), this.revenue.revenueOf(sellerId)]);
    return toSellerAccount(seller, balance, revenue, this.scheduleOf(seller));
  }

  async feeSchedule(sellerId: number): Promise<FeeSchedule> {
    return this.scheduleOf(await this.require(sellerId));
  }

  /** The fee schedules of these sellers, read through the caller's transaction (for batch jobs). */
  async feeSchedulesOf(sellerIds: number[], manager: EntityManager): Promise<Map<number, FeeSchedule>> {
    const sellers = await this.sellers.findByIds(sellerIds, manager);
    return new Map(sellers.map((seller) => [seller.id, this.scheduleOf(seller)]));
  }

  /** The seller's fee schedule, read through the caller's transaction. */
  async feeScheduleIn(manager: EntityManager, sellerId: number): Promise<FeeSchedule> {
    const seller = await this.sellers.findById(sellerId, manager);
    if (!seller) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
    return this.scheduleOf(seller);
  }

  /** The seller's permissions, fees or block changed; its propagation to the instances' key caches (which keep its profile too) is answered. */
  async update(sellerId: number, input: UpdateSellerInput): Promise<Propagation> {
    const seller = await this.require(sellerId);
    const patch: Partial<SellerEntity> = { ...this.permissionColumns(input.permissions ?? {}) };
    if (input.blocked !== undefined) patch.blocked = input.blocked;
    patch.feeOverrides = this.feeOverridesWith({ ...seller.feeOverrides, ...(input.fees ?? {}) }, input.permissions);
    await this.sellers.update(sellerId, patch);
    return this.apiKeys.sellerAccessChanged(sellerId);
  }

  async issueKeyPair(sellerId: number): Promise<KeyPair> {
    await this.require(sellerId);
    return this.apiKeys.issue(sellerId);
  }

  /** What taking a payment needs to know of the seller. */
  async salesProfile(sellerId: number): Promise<SalesProfile> {
    return (await this.requestProfiles(sellerId)).sales;
  }

  /** What a withdrawal needs to know of the seller. */
  async withdrawalProfile(sellerId: number): Promise<WithdrawalProfile> {
    return (await this.requestProfiles(sellerId)).withdrawal;
  }

  /** What API requests read of the seller, kept beside its key pairs until it changes (ApiKeysService.sellerProfile). */
  private requestProfiles(sellerId: number): Promise<{ sales: SalesProfile; withdrawal: WithdrawalProfile }> {
    return this.apiKeys.sellerProfile(sellerId, async () => {
      const seller = await this.require(sellerId);
      const fees = this.scheduleOf(seller);
      return {
        sales: {
          isCreditCardAvailable: seller.isCreditCardAvailable,
          isBoletoAvailable: seller.isBoletoAvailable,
          isPixAvailable: seller.isPixAvailable,
          merchantName: seller.commercialName ?? seller.legalName,
          merchantCity: seller.address?.city ?? DEFAULT_MERCHANT_CITY,
          invoiceDescriptor: seller.invoiceDescriptor,
          fees,
        },
        withdrawal: {
          transferEnabled: seller.transferEnabled,
          fees,
          user: { id: seller.id, name: seller.name, email: seller.email },
          payee: seller.documentType && seller.documentNumber ? { documentType: seller.documentType === 'cpf' ? 'CPF' : 'CNPJ', documentNumber: seller.documentNumber.replace(/\D/g, '') } : null,
        },
      };
    });
  }

  /**
   * The secrets postbacks are signed with now, decrypted: the current one, then the previous one while its
   * rotation's overlap window lasts.
   */
  async postbackSecrets(sellerId: number): Promise<string[]> {
    const sealed = await this.sellers.postbackSecretsOf(sellerId);
    if (sealed === null) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
    const keyring = this.config.encryptionKeyring;
    const current = decryptSecret(sealed.current, keyring);
    if (sealed.previous === null) return [current];
    try {
      return [current, decryptSecret(sealed.previous, keyring)];
    } catch (error) {
      // A replaced secret no key opens any more signs nothing: the current one still does.
      if (error instanceof SecretUnreadableError) return [current];
      throw error;
    }
  }

  /**
   * A new postback secret, shown once. Postbacks are signed with it from now on, and also with the one it
   * replaces until `overlapSeconds` have passed (0: the old one stops at once). A secret still in an
   * earlier rotation's window is expired now (at most two sign at a time): the answer says so.
   */
  async rotatePostbackSecret(sellerId: number, overlapSeconds: number): Promise<RotatedPostbackSecret> {
    const secret = newPostbackSecret();
    return this.dataSource.transaction(async (manager) => {
      const sealed = await this.sellers.postbackSecretsOf(sellerId, manager, true);
      if (sealed === null) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
      const previousExpiresAt = overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000) : null;
      await this.sellers.setPostbackSecrets(
        sellerId,
        { current: encryptSecret(secret, this.config.encryptionKey), previous: previousExpiresAt ? sealed.current : null, previousExpiresAt },
        manager,
      );
      return { postbackSecret: secret, previousSecretExpiresAt: previousExpiresAt, expiredEarlierSecret: sealed.previous !== null };
    });
  }

  /** Ends the previous secret's overlap window now (a leaked secret). Whether one was still signing. */
  async expirePreviousPostbackSecret(sellerId: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const sealed = await this.sellers.postbackSecretsOf(sellerId, manager, true);
      if (sealed === null) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
      await this.sellers.setPostbackSecrets(sellerId, { current: sealed.current, previous: null, previousExpiresAt: null }, manager);
      return sealed.previous !== null;
    });
  }

  /** When the previous secret stops signing, or null when only the current one signs. */
  async previousPostbackSecretExpiry(sellerId: number): Promise<Date | null> {
    const sealed = await this.sellers.postbackSecretsOf(sellerId);
    if (sealed === null) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
    return sealed.previousExpiresAt;
  }

  /**
   * Seals every postback secret again with the current ENCRYPTION_KEY (after a rotation, before the old
   * key leaves ENCRYPTION_KEYS), the previous ones too. Secrets no key opens are counted and left as they are.
   */
  async reencryptSecrets(): Promise<{ reencrypted: number; alreadyCurrent: number; unreadable: number }> {
    const result = { reencrypted: 0, alreadyCurrent: 0, unreadable: 0 };
    const keyring = this.config.encryptionKeyring;
    const reseal = (sealed: string): string | null => {
      if (isSealedWith(sealed, keyring.current)) {
        result.alreadyCurrent += 1;
        return null;
      }
      try {
        const resealed = encryptSecret(decryptSecret(sealed, keyring), keyring.current);
        result.reencrypted += 1;
        return resealed;
      } catch {
        result.unreadable += 1;
        return null;
      }
    };
    for (const { id, sealed, previous } of await this.sellers.allSealedSecrets()) {
      const current = reseal(sealed);
      const previousResealed = previous === null ? null : reseal(previous);
      if (current === null && previousResealed === null) continue;
      await this.sellers.resealPostbackSecrets(id, current, previousResealed);
    }
    return result;
  }

  /** NOT_FOUND when there is no seller with this id. */
  async assertExists(sellerId: number): Promise<void> {
    await this.require(sellerId);
  }

  private async require(sellerId: number): Promise<SellerEntity> {
    const seller = await this.sellers.findById(sellerId);
    if (!seller) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
    return seller;
  }

  private scheduleOf(seller: SellerEntity): FeeSchedule {
    return feeScheduleWith(seller.feeOverrides);
  }

  /** permissions.transferPriceCents is the withdrawal's fixed fee of the seller's fee schedule. */
  private feeOverridesWith(overrides: Record<string, number>, permissions?: PermissionsInput): Record<string, number> {
    const result = { ...overrides };
    if (permissions?.transferPriceCents !== undefined) result.cashoutFixedCents = permissions.transferPriceCents;
    feeScheduleWith(result); // throws on an impossible fee before anything is written
    return result;
  }

  private permissionColumns(p: PermissionsInput): Partial<SellerEntity> {
    const columns: Partial<SellerEntity> = {};
    if (p.isCreditCardAvailable !== undefined) columns.isCreditCardAvailable = p.isCreditCardAvailable;
    if (p.isBoletoAvailable !== undefined) columns.isBoletoAvailable = p.isBoletoAvailable;
    if (p.isPixAvailable !== undefined) columns.isPixAvailable = p.isPixAvailable;
    if (p.transferEnabled !== undefined) columns.transferEnabled = p.transferEnabled;
    if (p.anticipationEnabled !== undefined) columns.anticipationEnabled = p.anticipationEnabled;
    if (p.minAnticipatableDays !== undefined) columns.minAnticipatableDays = p.minAnticipatableDays;
    if (p.anticipatableVolumePercentage !== undefined) {
      columns.anticipatableVolumeBps = percentToBasisPoints(p.anticipatableVolumePercentage) ?? basisPoints(0);
    }
    if (p.anticipationPricePercent !== undefined) {
      columns.anticipationPriceBps = percentToBasisPoints(p.anticipationPricePercent) ?? basisPoints(0);
    }
    return columns;
  }
}
