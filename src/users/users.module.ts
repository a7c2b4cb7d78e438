import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InvitationEntity } from './entities/invitation.entity';
import { SellerUserEntity } from './entities/seller-user.entity';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** Dashboard users, their passwords and invitations. */
@Module({
  imports: [TypeOrmModule.forFeature([SellerUserEntity, InvitationEntity])],
  providers: [UsersService, UsersRepository],
  exports: [UsersService],
})
export class UsersModule {}
