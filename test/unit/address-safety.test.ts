import {
  isPublicUnicast,
  resolveSafeTarget,
  UnsafeTargetError,
  type Lookup,
} from '../../src/alerts/address-safety';

const webhook = { requireHttps: true, allowPrivate: false };
const resolvesTo =
  (...addresses: string[]): Lookup =>
  () =>
    Promise.resolve(
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

describe('resolveSafeTarget', () => {
  it.each([
    ['http://hooks.example.com/x', /https/],
    ['https://127.0.0.1/x', /127\.0\.0\.1/],
    ['https://127.1/x', /127\.0\.0\.1/],
    ['https://2130706433/x', /127\.0\.0\.1/],
    ['https://0x7f.0.0.1/x', /127\.0\.0\.1/],
    ['https://0177.0.0.1/x', /127\.0\.0\.1/],
    ['https://[::1]/x', /::1/],
    ['https://[::ffff:127.0.0.1]/x', /ffff/],
    ['https://[::ffff:a00:1]/x', /ffff/],
    ['https://[64:ff9b::a00:1]/x', /64:ff9b/],
    ['https://10.0.0.1/x', /10\.0\.0\.1/],
    ['https://172.16.5.4/x', /172\.16/],
    ['https://192.168.1.1/x', /192\.168/],
    ['https://169.254.169.254/latest/meta-data', /169\.254/],
    ['https://100.64.0.1/x', /100\.64/],
    ['https://0.0.0.0/x', /0\.0\.0\.0/],
    ['https://[::]/x', /::/],
    ['https://[fd00::1]/x', /fd00/],
    ['https://[fe80::1]/x', /fe80/],
    ['https://224.0.0.1/x', /224/],
    ['https://user:pass@hooks.example.com/x', /user name/],
    ['not a url', /valid URL/],
    ['ftp://hooks.example.com/x', /https/],
  ])('when the URL is %s, then it is refused', async (url, reason) => {
    const attempt = resolveSafeTarget(url, { ...webhook, lookup: resolvesTo('93.184.216.34') });
    await expect(attempt).rejects.toThrow(UnsafeTargetError);
    await expect(attempt).rejects.toThrow(reason);
  });

  it('when a host name resolves to a private address, then it is refused', async () => {
    await expect(
      resolveSafeTarget('https://internal.example.com/hook', {
        ...webhook,
        lookup: resolvesTo('10.0.0.5'),
      }),
    ).rejects.toThrow(/10\.0\.0\.5/);
  });

  it('when a host name has one public and one private record, then it is refused', async () => {
    const lookup = resolvesTo('93.184.216.34', '127.0.0.1');
    await expect(
      resolveSafeTarget('https://mixed.example.com/', { ...webhook, lookup }),
    ).rejects.toThrow(/127\.0\.0\.1/);
  });

  it('when a host name resolves to public addresses, then the checked address is the one to use', async () => {
    const target = await resolveSafeTarget('https://hooks.example.com/x?y=1', {
      ...webhook,
      lookup: resolvesTo('93.184.216.34'),
    });
    expect(target).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(target.url.href).toBe('https://hooks.example.com/x?y=1');
  });

  it('when the host does not resolve, then it is refused', async () => {
    const lookup: Lookup = () => Promise.reject(new Error('ENOTFOUND'));
    await expect(
      resolveSafeTarget('https://nowhere.invalid/', { ...webhook, lookup }),
    ).rejects.toThrow(/does not resolve/);
  });

  it('when private targets are explicitly allowed (development), then loopback passes', async () => {
    const target = await resolveSafeTarget('https://127.0.0.1:8443/hook', {
      requireHttps: true,
      allowPrivate: true,
    });
    expect(target.address).toBe('127.0.0.1');
  });

  it('when a chat webhook may use http, then http passes the scheme check but not a private host', async () => {
    const policy = {
      requireHttps: false,
      allowPrivate: false,
      lookup: resolvesTo('93.184.216.34'),
    };
    await expect(resolveSafeTarget('http://chat.example.com/hook', policy)).resolves.toBeDefined();
    await expect(resolveSafeTarget('http://127.0.0.1/hook', policy)).rejects.toThrow(
      UnsafeTargetError,
    );
  });
});

describe('cloud platform endpoints and the operator deny list', () => {
  const everywhere = [
    ['webhooks', webhook],
    ['private targets allowed', { requireHttps: true, allowPrivate: true }],
  ] as const;

  it.each(everywhere)(
    'when a URL names Azure’s platform endpoint 168.63.129.16 (%s), then it is refused',
    async (_, policy) => {
      for (const url of [
        'https://168.63.129.16/machine?comp=goalstate',
        'https://[::ffff:168.63.129.16]/',
        'https://2822734096/',
      ]) {
        await expect(resolveSafeTarget(url, policy)).rejects.toThrow(/Azure platform endpoint/);
      }
    },
  );

  it('when a host name resolves to a cloud platform endpoint, then it is refused', async () => {
    for (const address of ['168.63.129.16', '161.26.0.7']) {
      await expect(
        resolveSafeTarget('https://hooks.example.com/', {
          ...webhook,
          lookup: resolvesTo(address),
        }),
      ).rejects.toThrow(/cloud platform endpoint/);
    }
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://100.100.100.200/latest/meta-data/',
    'http://169.254.0.23/',
    'http://169.254.42.42/',
    'http://192.0.0.192/',
    'http://[fd00:ec2::254]/',
    'http://[fd20:ce::254]/',
  ])(
    'when a URL names another cloud metadata service (%s), then it is refused as not public',
    async (url) => {
      await expect(resolveSafeTarget(url, { ...webhook, requireHttps: false })).rejects.toThrow(
        /not a public address/,
      );
    },
  );

  it.each(everywhere)(
    'when an address is in OUTBOUND_DENY_CIDRS (%s), then it is refused and the CIDR named',
    async (_, policy) => {
      const deny = ['93.184.216.0/24', '2606:4700::/32'];
      await expect(
        resolveSafeTarget('https://93.184.216.34/', { ...policy, deny }),
      ).rejects.toThrow(/93\.184\.216\.0\/24, which OUTBOUND_DENY_CIDRS refuses/);
      await expect(
        resolveSafeTarget('https://[2606:4700:4700::1111]/', { ...policy, deny }),
      ).rejects.toThrow(/2606:4700::\/32/);
      const lookup = resolvesTo('8.8.8.8', '93.184.216.34');
      await expect(
        resolveSafeTarget('https://mixed.example.com/', { ...policy, deny, lookup }),
      ).rejects.toThrow(/93\.184\.216\.34/);
    },
  );

  it('when an address is outside every denied CIDR, then it passes', async () => {
    const target = await resolveSafeTarget('https://8.8.8.8/hook', {
      ...webhook,
      deny: ['93.184.216.0/24', '2606:4700::/32'],
    });
    expect(target.address).toBe('8.8.8.8');
  });
});

describe('isPublicUnicast', () => {
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])('when %s, then public', (a) => {
    expect(isPublicUnicast(a)).toBe(true);
  });
  it.each([
    '127.0.0.1',
    '255.255.255.255',
    '2001:db8::1',
    '2002:7f00:1::',
    'not-an-ip',
    '192.0.2.1',
  ])('when %s, then not public', (a) => expect(isPublicUnicast(a)).toBe(false));
});
