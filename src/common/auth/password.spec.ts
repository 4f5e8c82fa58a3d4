import { hashPassword, verifyPassword } from './password';

describe('password hashing (scrypt)', () => {
  it('verifies the right password and rejects a wrong one', async () => {
    const h = await hashPassword('correct horse battery');
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(h).not.toContain('correct horse');
    await expect(verifyPassword('correct horse battery', h)).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterz', h)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password!'), hashPassword('same password!')]);
    expect(a).not.toBe(b);
  });

  it.each(['', 'plain', 'scrypt$x$8$1$a$b', 'bcrypt$1$2$3$4$5'])('never verifies malformed hash %p', async (h) => {
    await expect(verifyPassword('whatever1234', h)).resolves.toBe(false);
  });
});
