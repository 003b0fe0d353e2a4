import { decoyPasswordHash, hashPassword, verifyPassword } from '../../src/accounts/passwords';

describe('password hashing', () => {
  it('when the same password is given, then it verifies; any other does not', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
  });

  it('when a password is hashed twice, then the salts differ', async () => {
    const [a, b] = await Promise.all([
      hashPassword('same password'),
      hashPassword('same password'),
    ]);
    expect(a).not.toBe(b);
  });

  it('when the stored value is malformed or another scheme, then nothing verifies', async () => {
    for (const stored of ['', 'plain', 'bcrypt$x$y', 'scrypt$15$8$1$']) {
      expect(await verifyPassword('anything', stored)).toBe(false);
    }
  });

  it('when no account exists, then the decoy hash is a real scrypt hash that matches nothing', async () => {
    const decoy = await decoyPasswordHash();
    expect(decoy).toMatch(/^scrypt\$15\$8\$1\$/);
    expect(await verifyPassword('', decoy)).toBe(false);
    expect(await decoyPasswordHash()).toBe(decoy);
  });
});
