import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { centsTransformer } from '../../database/bigint-cents.transformer';
import { Cents } from '../../domain/money';
import { SaleEntity } from './sale.entity';

@Entity({ name: 'sale_items' })
export class SaleItemEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'sale_id', type: 'integer' })
  saleId: number;

  @ManyToOne(() => SaleEntity, (sale) => sale.items)
  @JoinColumn({ name: 'sale_id' })
  sale: SaleEntity;

  @Column({ type: 'smallint' })
  position: number;

  @Column({ type: 'varchar' })
  title: string;

  @Column({ name: 'unit_price_cents', type: 'bigint', transformer: centsTransformer })
  unitPriceCents: Cents;

  @Column({ type: 'integer' })
  quantity: number;

  @Column({ type: 'boolean' })
  tangible: boolean;

  @Column({ name: 'product_id', type: 'integer', nullable: true })
  productId: number | null;

  @Column({ name: 'plan_id', type: 'varchar', nullable: true })
  planId: string | null;

  @Column({ name: 'plan_name', type: 'varchar', nullable: true })
  planName: string | null;

  @Column({ name: 'external_id', type: 'varchar', nullable: true })
  externalId: string | null;
}
