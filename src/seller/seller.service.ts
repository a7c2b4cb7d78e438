import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiKeysService, KeyPair, Propagation } from '../auth/api-keys.service';
import { BalanceService } from '../balance/balance.service';
import { decryptSecret, encryptSecret, isSealedWith, randomToken } from '../common/crypto/secrets';
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

export interface SalesProfile {
  isCreditCardAvailable: boolean;
  isBoletoAvailable: boolean;
  isPixAvailable: boolean;
  /** Name and city written in PIX codes. */
  merchantName: string;
  merchantCity: string;
  fees: FeeSchedule;
}

/** City written in PIX codes of sellers without an address. */
const DEFAULT_MERCHANT_CITY = 'SAO PAULO';

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
    const postbackSecret = randomToken('whsec_');
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

  /** The seller's permissions, fees or block changed; a block's propagation to the instances' key caches is answered. */
  async update(sellerId: number, input: UpdateSellerInput): Promise<Propagation> {
    const seller = await this.require(sellerId);
    const patch: Partial<SellerEntity> = { ...this.permissionColumns(input.permissions ?? {}) };
    if (input.blocked !== undefined) patch.blocked = input.blocked;
    patch.feeOverrides = this.feeOverridesWith({ ...seller.feeOverrides, ...(input.fees ?? {}) }, input.permissions);
    await this.sellers.update(sellerId, patch);
    return input.blocked !== undefined ? this.apiKeys.sellerAccessChanged(sellerId) : { announced: true };
  }

  async issueKeyPair(sellerId: number): Promise<KeyPair> {
    await this.require(sellerId);
    return this.apiKeys.issue(sellerId);
  }

  /** What taking a payment needs to know of the seller. */
  async salesProfile(sellerId: number): Promise<SalesProfile> {
    const seller = await this.require(sellerId);
    return {
      isCreditCardAvailable: seller.isCreditCardAvailable,
      isBoletoAvailable: seller.isBoletoAvailable,
      isPixAvailable: seller.isPixAvailable,
      merchantName: seller.commercialName ?? seller.legalName,
      merchantCity: seller.address?.city ?? DEFAULT_MERCHANT_CITY,
      fees: this.scheduleOf(seller),
    };
  }

  /** What a withdrawal needs to know of the seller. */
  async withdrawalProfile(sellerId: number): Promise<{ transferEnabled: boolean; fees: FeeSchedule; user: { id: number; name: string; email: string } }> {
    const seller = await this.require(sellerId);
    return { transferEnabled: seller.transferEnabled, fees: this.scheduleOf(seller), user: { id: seller.id, name: seller.name, email: seller.email } };
  }

  /** The seller's postback signing secret, decrypted. */
  async postbackSecret(sellerId: number): Promise<string> {
    const sealed = await this.sellers.postbackSecretOf(sellerId);
    if (sealed === null) throw new DomainError('NOT_FOUND', `No seller account with id ${sellerId}`);
    return decryptSecret(sealed, this.config.encryptionKeyring);
  }

  /** A new postback secret; postbacks are signed with it from now on. Shown once. */
  async rotatePostbackSecret(sellerId: number): Promise<string> {
    await this.require(sellerId);
    const secret = randomToken('whsec_');
    await this.sellers.update(sellerId, { postbackSecretEncrypted: encryptSecret(secret, this.config.encryptionKey) });
    return secret;
  }

  /**
   * Seals every postback secret again with the current ENCRYPTION_KEY (after a rotation, before the old
   * key leaves ENCRYPTION_KEYS). Secrets no key opens are counted and left as they are.
   */
  async reencryptSecrets(): Promise<{ reencrypted: number; alreadyCurrent: number; unreadable: number }> {
    const result = { reencrypted: 0, alreadyCurrent: 0, unreadable: 0 };
    const keyring = this.config.encryptionKeyring;
    for (const { id, sealed } of await this.sellers.allSealedSecrets()) {
      if (isSealedWith(sealed, keyring.current)) {
        result.alreadyCurrent += 1;
        continue;
      }
      let plain: string;
      try {
        plain = decryptSecret(sealed, keyring);
      } catch {
        result.unreadable += 1;
        continue;
      }
      await this.sellers.update(id, { postbackSecretEncrypted: encryptSecret(plain, keyring.current) });
      result.reencrypted += 1;
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

  /** permissions.transferPriceCents is the cashout's fixed fee of the seller's fee schedule. */
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
