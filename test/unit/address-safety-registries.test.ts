import ipaddr from 'ipaddr.js';
import {
  resolveSafeTarget,
  TransientLookupError,
  UnsafeTargetError,
  type Lookup,
} from '../../src/alerts/address-safety';
import {
  IPV4_SPECIAL_BLOCKS,
  IPV6_SPECIAL_BLOCKS,
  whyNotGlobalUnicast,
} from '../../src/net/special-purpose-addresses';

/*
 * The table is generated from the registries themselves: for every special-purpose block, its
 * first, second, middle and last address, each in every spelling a URL or a DNS answer can carry.
 * Every one must be refused; addresses just outside the blocks must pass.
 */

const policy = { requireHttps: true, allowPrivate: false };

function v4Addresses(cidr: string): number[] {
  const [ip, bits] = ipaddr.IPv4.parseCIDR(cidr);
  const first = ip.toByteArray().reduce((n, b) => n * 256 + b, 0);
  const size = 2 ** (32 - bits);
  return [
    ...new Set([
      first,
      first + Math.min(1, size - 1),
      first + Math.floor(size / 2),
      first + size - 1,
    ]),
  ];
}

function v4Text(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** Every way a URL host can spell one IPv4 address (the WHATWG URL parser reads them all). */
function v4Spellings(n: number): string[] {
  const bytes = v4Text(n).split('.').map(Number) as [number, number, number, number];
  const [a, b, c, d] = bytes;
  return [
    v4Text(n),
    `${v4Text(n)}.`,
    String(n),
    `0x${n.toString(16)}`,
    `0X${n.toString(16).toUpperCase()}`,
    bytes.map((x) => `0${x.toString(8)}`).join('.'),
    bytes.map((x) => `0x${x.toString(16)}`).join('.'),
    `${a}.${b}.${c * 256 + d}`,
    `${a}.${b * 65536 + c * 256 + d}`,
    `0x${a.toString(16)}.${b}.0${c.toString(8)}.${d}`,
    v4Text(n)
      .split('')
      .map((ch) => (ch === '.' ? ch : `%${ch.charCodeAt(0).toString(16)}`))
      .join(''),
    // Full-width digits and the ideographic full stop: IDNA maps them to the ASCII address.
    v4Text(n).replace(/\d/g, (digit) => String.fromCharCode(0xff10 + Number(digit))),
    v4Text(n).replace(/\./g, '\u3002'),
  ];
}

function v6Addresses(cidr: string): bigint[] {
  const [ip, bits] = ipaddr.IPv6.parseCIDR(cidr);
  const first = ip.parts.reduce((n, p) => (n << 16n) | BigInt(p), 0n);
  const size = 1n << BigInt(128 - bits);
  return [...new Set([first, first + (size > 1n ? 1n : 0n), first + size / 2n, first + size - 1n])];
}

function v6Parts(n: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(16 * (7 - i))) & 0xffffn));
}

/** Compressed, full with leading zeros, upper case, and with an IPv4 tail. */
function v6Spellings(n: bigint): string[] {
  const parts = v6Parts(n);
  const compressed = new ipaddr.IPv6(parts).toString();
  const tail = `${parts[6]! >> 8}.${parts[6]! & 255}.${parts[7]! >> 8}.${parts[7]! & 255}`;
  return [
    compressed,
    parts.map((p) => p.toString(16).padStart(4, '0')).join(':'),
    compressed.toUpperCase(),
    `${parts
      .slice(0, 6)
      .map((p) => p.toString(16))
      .join(':')}:${tail}`,
  ].map((s) => `[${s}]`);
}

const v4Cases = IPV4_SPECIAL_BLOCKS.flatMap((block) =>
  v4Addresses(block.cidr).flatMap((n) =>
    v4Spellings(n).map((host) => ({ block: block.cidr, host, address: v4Text(n) })),
  ),
);
const v6Cases = IPV6_SPECIAL_BLOCKS.flatMap((block) =>
  v6Addresses(block.cidr).flatMap((n) =>
    v6Spellings(n).map((host) => ({ block: block.cidr, host, address: v6Parts(n) })),
  ),
);
/** Public IPv4 addresses wrapped in every IPv6 form that carries one: all refused. */
const wrapped = ['8.8.8.8', '93.184.216.34'].flatMap((v4) => {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return [
    `[::${v4}]`,
    `[::${hi}:${lo}]`,
    `[::ffff:${v4}]`,
    `[::ffff:${hi}:${lo}]`,
    `[0:0:0:0:0:ffff:${v4}]`,
    `[64:ff9b::${v4}]`,
    `[64:ff9b:1::${hi}:${lo}]`,
    `[2002:${hi}:${lo}::1]`,
    `[2001:0:4136:e378:8000:63bf:${(~((a << 8) | b) & 0xffff).toString(16)}:${(~((c << 8) | d) & 0xffff).toString(16)}]`,
  ];
});

const stubLookup: Lookup = () => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);

describe('address safety: every registry block, every spelling', () => {
  it('when the table is generated, then it holds well over 150 spellings', () => {
    expect(v4Cases.length + v6Cases.length + wrapped.length).toBeGreaterThan(1000);
  });

  it.each(v4Cases)(
    'when the URL host is $host ($block), then it is refused as $address',
    async ({ host, address }) => {
      const attempt = resolveSafeTarget(`https://${host}/hook`, { ...policy, lookup: stubLookup });
      await expect(attempt).rejects.toThrow(
        `resolves to ${address}, which is not a public address`,
      );
    },
  );

  it.each(v6Cases)('when the URL host is $host ($block), then it is refused', async ({ host }) => {
    const attempt = resolveSafeTarget(`https://${host}/hook`, { ...policy, lookup: stubLookup });
    await expect(attempt).rejects.toThrow(/not a public address/);
  });

  it.each(wrapped)(
    'when a public IPv4 address is wrapped as %s, then it is refused',
    async (host) => {
      await expect(
        resolveSafeTarget(`https://${host}/hook`, { ...policy, lookup: stubLookup }),
      ).rejects.toThrow(/not a public address/);
    },
  );

  it.each([...IPV4_SPECIAL_BLOCKS, ...IPV6_SPECIAL_BLOCKS])(
    'when a DNS name resolves into $cidr ($name), then it is refused and the block is named',
    async ({ cidr }) => {
      const [ip] = ipaddr.parseCIDR(cidr);
      const address = ip.toString();
      const lookup: Lookup = () =>
        Promise.resolve([
          { address: '93.184.216.34', family: 4 },
          { address, family: ip.kind() === 'ipv6' ? 6 : 4 },
        ]);
      const attempt = resolveSafeTarget('https://hooks.example.test/x', { ...policy, lookup });
      await expect(attempt).rejects.toThrow(`resolves to ${address}`);
      await expect(attempt).rejects.toThrow(cidr.replace(/\/\d+$/, ''));
    },
  );

  it.each(['fe80::1%eth0', 'fe80::1%25', 'ff02::1%lo', '::1%1'])(
    'when a DNS answer carries a zone id (%s), then it is refused',
    async (address) => {
      const lookup: Lookup = () => Promise.resolve([{ address, family: 6 }]);
      await expect(
        resolveSafeTarget('https://hooks.example.test/x', { ...policy, lookup }),
      ).rejects.toThrow(/not a public address/);
    },
  );

  it.each(['[fe80::1%25eth0]', '[fe80::1%eth0]', '[::1%251]'])(
    'when the URL host carries a zone id (%s), then it is refused',
    async (host) => {
      await expect(
        resolveSafeTarget(`https://${host}/x`, { ...policy, lookup: stubLookup }),
      ).rejects.toThrow(UnsafeTargetError);
    },
  );

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '0x5db8d822',
    '1572395042',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.0',
    '192.0.3.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '[2606:4700:4700::1111]',
    '[2001:4860:4860::8888]',
    '[2001:200::1]',
    '[2003::1]',
    '[2620:4f:8001::1]',
    '[3fff:1000::1]',
    '[3ffe::1]',
  ])('when the URL host is %s (global unicast), then it is accepted', async (host) => {
    await expect(
      resolveSafeTarget(`https://${host}/hook`, { ...policy, lookup: stubLookup }),
    ).resolves.toMatchObject({ url: expect.any(URL) });
  });

  it.each([
    ['::127.0.0.1', /IPv4-compatible/],
    ['::7f00:1', /IPv4-compatible/],
    ['::a9fe:a9fe', /IPv4-compatible/],
    ['4000::1', /outside 2000::\/3/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['2001:db8::1', /Documentation/],
    ['192.0.0.9', /Port Control Protocol/],
  ])('when %s is checked, then the reason names its block', (address, reason) => {
    expect(whyNotGlobalUnicast(address)).toMatch(reason);
  });
});

describe('address safety: a resolver that fails this once', () => {
  const failing =
    (code: string): Lookup =>
    () =>
      Promise.reject(Object.assign(new Error(`getaddrinfo ${code} hooks.example.test`), { code }));

  it.each(['EAI_AGAIN', 'ETIMEOUT', 'ESERVFAIL', 'ECONNREFUSED'])(
    'when the lookup fails with %s, then the refusal is transient (a delivery retries it)',
    async (code) => {
      const attempt = resolveSafeTarget('https://hooks.example.test/x', {
        ...policy,
        lookup: failing(code),
      });
      await expect(attempt).rejects.toBeInstanceOf(TransientLookupError);
      await expect(attempt).rejects.toThrow(
        `host hooks.example.test did not resolve this time (${code})`,
      );
    },
  );

  it.each(['ENOTFOUND', 'ENODATA', 'EAI_FAIL'])(
    'when the lookup fails with %s, then the name does not resolve, for good',
    async (code) => {
      const attempt = resolveSafeTarget('https://hooks.example.test/x', {
        ...policy,
        lookup: failing(code),
      });
      await expect(attempt).rejects.toThrow('host hooks.example.test does not resolve');
      await expect(attempt).rejects.not.toBeInstanceOf(TransientLookupError);
    },
  );
});
