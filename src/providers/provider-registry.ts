import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig, ProviderRail } from '../config/app-config';
import { InvalidEnvironmentError } from '../config/env.schema';
import { DomainError } from '../domain/domain-error';
import { AutomaticPixProvider } from './automatic-pix.port';
import { BoletoProvider, CardProvider } from './card-provider.port';
import { NotificationSource } from './notifications.port';
import { PayoutProvider } from './payout-provider.port';
import { PixProvider } from './pix-provider.port';

/**
 * One provider as the registry knows it: its name (the one written on every record it holds) and the
 * ports it implements. A provider is one folder under src/providers implementing some of these ports,
 * plus its line in providers.module.ts.
 */
export interface ProviderAdapters {
  readonly name: string;
  readonly card?: CardProvider;
  readonly boleto?: BoletoProvider;
  readonly pix?: PixProvider;
  readonly automaticPix?: AutomaticPixProvider;
  readonly payout?: PayoutProvider;
  /** Where and how the provider notifies (the one intake, src/intake). */
  readonly notifications?: NotificationSource;
}

/** The adapters of every provider this instance can build (providers.module.ts). */
export const PROVIDER_ADAPTERS = Symbol('PROVIDER_ADAPTERS');

type Port = 'card' | 'boleto' | 'pix' | 'automaticPix' | 'payout' | 'notifications';

/** The port each rail's new records are made through. */
const RAIL_PORT: Record<ProviderRail, Port> = { PIX: 'pix', CARD: 'card', BOLETO: 'boleto', PAYOUT: 'payout' };

const PORT_WORDS: Record<Port, string> = { card: 'card payments', boleto: 'boletos', pix: 'PIX', automaticPix: 'Pix Automático', payout: 'payouts', notifications: 'notifications' };

/**
 * The configured providers, resolved by the name each record carries. New records go to their rail's
 * provider (`forNew`); every later step of a record goes to the provider written on it (`card`, `pix`…),
 * so changing a rail's provider changes only new records. A provider is configured when some rail names
 * it; a record whose provider is not is refused with 409 CONFLICT naming it (nothing is asked of
 * another provider in its place).
 */
@Injectable()
export class ProviderRegistry implements OnModuleInit {
  private readonly byName = new Map<string, ProviderAdapters>();
  private readonly rails: Record<ProviderRail, string>;
  private readonly configured: ReadonlySet<string>;

  constructor(@Inject(PROVIDER_ADAPTERS) adapters: ProviderAdapters[], config: AppConfig) {
    for (const adapter of adapters) this.add(adapter);
    this.rails = config.providers;
    this.configured = new Set(Object.values(this.rails));
  }

  /**
   * A provider the embedding application brings (a test's adapter), added after the application is
   * created and before it is initialized (createApp's `providers`): the configuration may name it.
   */
  add(adapters: ProviderAdapters): void {
    if (this.byName.has(adapters.name)) throw new Error(`Two providers named ${adapters.name}`);
    this.byName.set(adapters.name, adapters);
  }

  /** Each rail names a provider that takes it, or the boot stops with a one-line reason. */
  onModuleInit(): void {
    for (const [rail, name] of Object.entries(this.rails) as Array<[ProviderRail, string]>) {
      const port = RAIL_PORT[rail];
      if (!this.byName.get(name)?.[port]) {
        const known = [...this.byName.values()].filter((adapter) => adapter[port]).map((adapter) => adapter.name);
        throw new InvalidEnvironmentError(`Invalid configuration: ${rail}_PROVIDER=${name}: no provider of that name takes ${PORT_WORDS[port]} (known: ${known.join(', ')})`);
      }
    }
  }

  /** The provider the rail's new records go to. */
  forNew(rail: ProviderRail): string {
    return this.rails[rail];
  }

  /** The providers some rail names: the records the jobs here may act on (others' are left to where theirs is configured). */
  configuredNames(): string[] {
    return [...this.configured];
  }

  /** Whether some rail names this provider (its records can be acted on here). */
  isConfigured(name: string): boolean {
    return this.configured.has(name);
  }

  /** The configured providers that implement `port`, each once (e.g. every PSP to reconcile). */
  configuredWith<P extends Port>(port: P): Array<{ name: string; adapter: NonNullable<ProviderAdapters[P]> }> {
    return [...this.configured].flatMap((name) => {
      const adapter = this.byName.get(name)?.[port];
      return adapter ? [{ name, adapter: adapter as NonNullable<ProviderAdapters[P]> }] : [];
    });
  }

  card(provider: string, record?: string): CardProvider {
    return this.port(provider, 'card', record);
  }

  boleto(provider: string, record?: string): BoletoProvider {
    return this.port(provider, 'boleto', record);
  }

  pix(provider: string, record?: string): PixProvider {
    return this.port(provider, 'pix', record);
  }

  automaticPix(provider: string, record?: string): AutomaticPixProvider {
    return this.port(provider, 'automaticPix', record);
  }

  payout(provider: string, record?: string): PayoutProvider {
    return this.port(provider, 'payout', record);
  }

  private port<P extends Port>(provider: string, port: P, record = 'This record'): NonNullable<ProviderAdapters[P]> {
    const adapter = this.configured.has(provider) ? this.byName.get(provider)?.[port] : undefined;
    if (!adapter) {
      throw new DomainError(
        'CONFLICT',
        `${record} is held by the provider ${provider}, which is not configured for ${PORT_WORDS[port]} on this gateway: ` +
          `it can be acted on only where ${provider} is configured (the *_PROVIDER variables)`,
        { provider },
      );
    }
    return adapter as NonNullable<ProviderAdapters[P]>;
  }
}

/** The rail a sale's payment method is taken on (a transfer is the boleto provider's: a bank document). */
export function railOf(paymentMethod: string): ProviderRail {
  if (paymentMethod === 'PIX') return 'PIX';
  if (paymentMethod === 'CREDIT_CARD' || paymentMethod === 'DEBIT_CARD') return 'CARD';
  return 'BOLETO';
}
