import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './entities/api-key.entity';
import { UserEntity } from './entities/user.entity';
import { AuthController, UsersController } from './users.controller';
import { LoginAttemptsRepository } from './login-attempts.repository';
import { LoginThrottleInterceptor } from './login-throttle.interceptor';
import { LoginThrottleService } from './login-throttle.service';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, ApiKeyEntity])],
  controllers: [AuthController, UsersController],
  providers: [
    UsersService,
    UsersRepository,
    LoginAttemptsRepository,
    LoginThrottleService,
    LoginThrottleInterceptor,
  ],
  exports: [UsersService],
})
export class UsersModule {}
