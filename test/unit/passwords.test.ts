import { scryptSync } from 'node:crypto';
import { CURRENT_PARAMETERS, PasswordHasher } from '../../src/accounts/passwords';
import { DomainError } from '../../src/errors';

const hasher = new PasswordHasher({ concurrency: 2 });

/** A hash as the service wrote it before the parameters were raised (N = 2^15). */
function legacyHash(password: string): string {
  const salt = Buffer.from('0123456789abcdef');
  const key = scryptSync(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', 15, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
}

describe('password hashing', () => {
  it("when a password is hashed, then it uses OWASP's scrypt parameters (N=2^17, r=8, p=1)", async () => {
    expect(CURRENT_PARAMETERS).toEqual({ costLog2: 17, blockSize: 8, parallelism: 1 });
    expect(await hasher.hash('correct horse battery staple')).toMatch(/^scrypt\$17\$8\$1\$/);
  });

  it('when the same password is given, then it verifies; any other does not', async () => {
    const stored = await hasher.hash('correct horse battery staple');
    expect(await hasher.verify('correct horse battery staple', stored)).toEqual({
      valid: true,
      outdated: false,
    });
    expect((await hasher.verify('correct horse battery stapl', stored)).valid).toBe(false);
  });

  it('when a hash has older, weaker parameters, then it still verifies and is marked outdated', async () => {
    const stored = legacyHash('an older password');
    expect(await hasher.verify('an older password', stored)).toEqual({
      valid: true,
      outdated: true,
    });
    expect((await hasher.verify('another password', stored)).valid).toBe(false);
  });

  it('when a password is hashed twice, then the salts differ', async () => {
    const [a, b] = await Promise.all([hasher.hash('same password'), hasher.hash('same password')]);
    expect(a).not.toBe(b);
  });

  it('when the stored value is malformed, another scheme or asks for absurd parameters, then nothing verifies', async () => {
    const absurd = legacyHash('x').replace(/^scrypt\$15\$/, 'scrypt$30$');
    for (const stored of [
      '',
      'plain',
      'bcrypt$x$y',
      'scrypt$15$8$1$',
      absurd,
      `${legacyHash('x')}$extra`,
    ]) {
      expect((await hasher.verify('anything', stored)).valid).toBe(false);
    }
  });

  it('when no account exists, then the decoy hash is a current scrypt hash that matches nothing', async () => {
    const decoy = await hasher.decoyHash();
    expect(decoy).toMatch(/^scrypt\$17\$8\$1\$/);
    expect((await hasher.verify('', decoy)).valid).toBe(false);
    expect(await hasher.decoyHash()).toBe(decoy);
  });

  it('when more hashes wait than the limit allows, then the excess is refused at once (unavailable, login_busy)', async () => {
    const small = new PasswordHasher({ concurrency: 1, waitingPerSlot: 2 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () => small.hash('flooding password')),
    );
    const refused = outcomes.filter((o) => o.status === 'rejected');
    // One runs, two wait, the other three are refused without being computed.
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(DomainError);
      expect(r.reason).toMatchObject({
        kind: 'unavailable',
        detail: { error: 'login_busy' },
        retryAfterSeconds: 1,
      });
    }
  });

  describe('known devices', () => {
    /** Verifies (N = 2^15, fast) in a line, noting when each one's turn to hash comes. */
    function turns(hasher: PasswordHasher) {
      const order: string[] = [];
      const stored = legacyHash('a password');
      const verify = (name: string, priority: 'first' | 'normal') =>
        hasher.verify('a password', stored, {
          priority,
          whenItsTurn: () => Promise.resolve(void order.push(name)),
        });
      return { order, verify };
    }

    it("when the others' slots are taken and more wait, then a known device hashes at once in a slot of its own", async () => {
      const { order, verify } = turns(new PasswordHasher({ concurrency: 1 }));
      const all = [verify('n1', 'normal'), verify('n2', 'normal'), verify('n3', 'normal')];
      all.push(verify('first', 'first'));
      await Promise.all(all);
      expect(order).toEqual(['n1', 'first', 'n2', 'n3']);
    });

    it('when known devices must wait too, then they go before every waiting other hash', async () => {
      const { order, verify } = turns(new PasswordHasher({ concurrency: 1 }));
      const all = [verify('n1', 'normal'), verify('f1', 'first'), verify('n2', 'normal')];
      all.push(verify('f2', 'first'));
      await Promise.all(all);
      expect(order).toEqual(['n1', 'f1', 'f2', 'n2']);
    });

    it('while a known device holds its slot, then no other hash starts beside it', async () => {
      const hasher = new PasswordHasher({ concurrency: 1 });
      const { order, verify } = turns(hasher);
      let open = () => {};
      const held = new Promise<void>((resolve) => (open = resolve));
      const n1 = verify('n1', 'normal');
      const f1 = hasher.verify('a password', legacyHash('a password'), {
        priority: 'first',
        whenItsTurn: () => held,
      });
      const n2 = verify('n2', 'normal');
      await n1;
      await new Promise((resolve) => setImmediate(resolve));
      // n1's slot is free, yet n2 waits for the known device.
      expect(order).toEqual(['n1']);
      open();
      await Promise.all([f1, n2]);
      expect(order).toEqual(['n1', 'n2']);
    });

    it("when the others' line is full, then a known device is still taken; when its own line is full, it is refused with 503", async () => {
      const { verify } = turns(new PasswordHasher({ concurrency: 1, waitingPerSlot: 0 }));
      const outcomes = await Promise.allSettled([
        verify('n1', 'normal'),
        verify('n2', 'normal'),
        verify('f1', 'first'),
        verify('f2', 'first'),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'rejected',
      ]);
      for (const o of outcomes.filter((o) => o.status === 'rejected')) {
        expect(o.reason).toMatchObject({ kind: 'unavailable', detail: { error: 'login_busy' } });
      }
    });
  });
});
