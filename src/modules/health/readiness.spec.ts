import type { MigrationInterface } from 'typeorm';
import { readinessVerdict } from './readiness';

class Init1700000000000 implements MigrationInterface {
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}
class Later1700000000100 implements MigrationInterface {
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}
const named: MigrationInterface = { name: 'Named1700000000200', up: async () => {}, down: async () => {} };

describe('readinessVerdict', () => {
  it.each([
    [[], [], 'ready'],
    [[new Init1700000000000()], ['Init1700000000000'], 'ready'],
    [[new Init1700000000000(), new Later1700000000100()], ['Init1700000000000'], 'migrations_pending'],
    [[new Init1700000000000()], [], 'migrations_pending'],
    // An applied migration the code no longer has does not make the instance unready.
    [[new Init1700000000000()], ['Init1700000000000', 'Gone1600000000000'], 'ready'],
    // The `name` property wins over the class name.
    [[named], ['Named1700000000200'], 'ready'],
    [[named], ['Object'], 'migrations_pending'],
  ] as Array<[MigrationInterface[], string[], string]>)('%j applied %j: %s', (migrations, applied, verdict) => {
    expect(readinessVerdict(migrations, applied)).toBe(verdict);
  });
});
