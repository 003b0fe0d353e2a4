import { execFile, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import request from 'supertest';
import {
  startPublicListeners,
  type PublicListeners,
} from '../../src/canaries/listeners/public-listeners';
import { createKey } from '../support/accounts';
import { launchChromium } from '../support/browser';
import { bearer, canaryAccounts } from '../support/canary-accounts';
import { runWithCanaryDns } from '../support/canary-dns';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, testLogger, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';
import { freePort } from '../../tools/stack';

const run = promisify(execFile);
const ZONE = 'canary.example.com';

let t: TestApp;
let worker: { stop(): Promise<void> };
let receiver: Receiver;
let listeners: PublicListeners;
let tripwireBase: string;
let wireguardPort: number;
/** The decoy endpoint's key, as `wg genkey` prints one. */
const WIREGUARD_KEY = Buffer.from(
  generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' }).d!,
  'base64url',
).toString('base64');
let accounts: ReturnType<typeof canaryAccounts>;
let browser: Browser;
/** Where redirects lead: a plain page of the owner's own site. */
let destination: Server;
let destinationUrl: string;

beforeAll(async () => {
  const tripwirePort = await freePort();
  wireguardPort = await freePort();
  tripwireBase = `http://127.0.0.1:${tripwirePort}`;
  t = await createTestApp({
    config: testConfig({
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALERT_GATHER_MS: '500',
      TRIPWIRE_HOST: '127.0.0.1',
      TRIPWIRE_PORT: String(tripwirePort),
      PUBLIC_TRIPWIRE_URL: tripwireBase,
      DECOY_SMTP_PORT: '0',
      CANARY_DNS_DOMAIN: ZONE,
      DNS_PORT: '0',
      DNS_ANSWER_IPV4: '192.0.2.10',
      PUBLIC_HOST: '127.0.0.1',
      WIREGUARD_PORT: String(wireguardPort),
      WIREGUARD_PRIVATE_KEY: WIREGUARD_KEY,
    }),
  });
  listeners = await startPublicListeners(t.config, t, testLogger(t.config));
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
  accounts = canaryAccounts(t.app, receiver);
  browser = await launchChromium();
  destination = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>Intranet</title><h1>Welcome to the intranet</h1>');
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => destination.once('listening', resolve));
  destinationUrl = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/home`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => destination?.close(resolve));
  await listeners.close();
  await worker.stop();
  await receiver.stop();
  await t.close();
});

/** A canary's artifact as its owner downloads it. */
async function download(
  who: Parameters<typeof bearer>[0],
  canary: { artifact?: { url: string } },
): Promise<Buffer> {
  const res = await request(t.app).get(canary.artifact!.url).set(bearer(who)).responseType('blob');
  expect(res.status).toBe(200);
  return res.body as Buffer;
}

describe('a canary artifact download', () => {
  it('when the owner (session or a canaries:read key) asks, then the file comes with its type and name; others are refused', async () => {
    const { who } = await accounts.account();
    const canary = await accounts.plant(who, 'qr_code');
    expect(canary.artifact).toEqual({
      filename: 'qr-code.png',
      content_type: 'image/png',
      url: `/api/canaries/${canary.canary_id}/artifact`,
    });
    const bySession = await request(t.app).get(canary.artifact!.url).set(bearer(who));
    expect(bySession.status).toBe(200);
    expect(bySession.headers['content-type']).toBe('image/png');
    expect(bySession.headers['content-disposition']).toMatch(
      /^attachment; filename="?qr-code\.png"?$/,
    );
    expect((bySession.body as Buffer).subarray(1, 4).toString()).toBe('PNG');

    const reader = await createKey(t.app, who.token, { scopes: ['canaries:read'] });
    const byKey = await request(t.app).get(canary.artifact!.url).set('X-API-Key', reader.key);
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual(bySession.body);

    const otherScope = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    const refused = await request(t.app).get(canary.artifact!.url).set('X-API-Key', otherScope.key);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('canaries:read');
    expect((await request(t.app).get(canary.artifact!.url)).status).toBe(401);
    const stranger = await accounts.account();
    const theirs = await request(t.app).get(canary.artifact!.url).set(bearer(stranger.who));
    expect(theirs.status).toBe(403);
    expect(theirs.body).not.toHaveProperty('artifact');
  });

  it('when a kind planted as text is asked for its artifact, then 404 says it has none', async () => {
    const { who } = await accounts.account();
    const canary = await accounts.plant(who, 'url');
    expect(canary).not.toHaveProperty('artifact');
    const res = await request(t.app)
      .get(`/api/canaries/${canary.canary_id}/artifact`)
      .set(bearer(who));
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe(`Canary ${canary.canary_id} has no artifact`);
  });
});

describe('planting options', () => {
  it.each([
    [{ kind: 'fast_redirect' }, 'body.redirect_url: required for kind fast_redirect'],
    [{ kind: 'url', redirect_url: 'https://example.com/' }, 'body.redirect_url: only for kind'],
    [{ kind: 'fast_redirect', redirect_url: 'javascript:alert(1)' }, 'body.redirect_url'],
    [{ kind: 'web_image', image: Buffer.from('<svg/>').toString('base64') }, 'body.image: must be'],
    [{ kind: 'cloned_website' }, 'body.site_url: required for kind cloned_website'],
  ])(
    'when %j is planted, then 422 names the field and nothing is planted',
    async (body, detail) => {
      const { who } = await accounts.account();
      const res = await request(t.app).post('/api/canaries').set(bearer(who)).send(body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toContain(detail);
      const list = await request(t.app).get('/api/canaries').set(bearer(who));
      expect(list.body.canaries).toEqual([]);
    },
  );
});

describe('a fast redirect canary', () => {
  it('when Chromium follows it, then the visitor lands on the destination and the owner is alerted once', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'fast_redirect', { redirect_url: destinationUrl });
    expect(canary.value).toMatch(new RegExp(`^${tripwireBase}/f/[\\w-]{24}$`));
    expect(canary.redirect_url).toBe(destinationUrl);

    const page = await browser.newPage();
    await page.goto(canary.value);
    expect(page.url()).toBe(destinationUrl);
    expect(await page.textContent('h1')).toBe('Welcome to the intranet');
    await page.close();

    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      canaryKind: 'fast_redirect',
      platform: 'web browser',
      memo: 'fast_redirect in the test',
      attacker: { ip: '127.0.0.1' },
    });
    const hits = await accounts.hitsOf(who, canary.canary_id);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.source).toMatchObject({
      via: 'url',
      user_agent: expect.stringMatching(/Chrome\//),
    });
  });

  it('when a token nobody planted is followed, then it gets the ordinary page of /r/', async () => {
    const unknown = await fetch(`${tripwireBase}/f/nobody-planted-this-token`, {
      redirect: 'manual',
    });
    const ordinary = await fetch(`${tripwireBase}/r/nobody-planted-this-token`);
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toBe(await ordinary.text());
  });
});

describe('a slow redirect canary', () => {
  it('when Chromium follows it, then its script reads the browser details, the hit records them, and the visitor lands on the destination', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'slow_redirect', { redirect_url: destinationUrl });
    expect(canary.value).toMatch(new RegExp(`^${tripwireBase}/s/[\\w-]{24}$`));
    const page = await browser.newPage({ locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    await page.goto(canary.value);
    await page.waitForURL(destinationUrl);
    await page.close();
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'web browser' });
    const hits = await accounts.hitsOf(who, canary.canary_id);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.source.user_agent).toMatch(
      /Chrome\/.* \[tz=Europe\/Berlin; lang=de-DE; screen=\d+x\d+; platform=Linux[^;]*; cores=\d+\]$/,
    );
  });

  it('when a token nobody planted is followed, then the same page leads to the ordinary page', async () => {
    const [unknown, other] = await Promise.all([
      fetch(`${tripwireBase}/s/nobody-planted-this`).then((r) => r.text()),
      fetch(`${tripwireBase}/s/nobody-planted-that`).then((r) => r.text()),
    ]);
    expect(unknown.replace('this', 'that')).toBe(other);
    const go = await fetch(`${tripwireBase}/s/nobody-planted-this/go?d=tz%3DUTC`, {
      redirect: 'manual',
    });
    expect(go.status).toBe(200);
    expect(await go.text()).toBe(await (await fetch(`${tripwireBase}/r/x`)).text());
  });
});

describe('a cloned website canary', () => {
  it('when Chromium shows the page on its own origin nothing fires; served from another origin, it fires once', async () => {
    const { who, path } = await accounts.account();
    let snippet = '';
    const site = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>Sign in</title><form><input name="user"></form>${snippet}`);
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => site.once('listening', resolve));
    const port = (site.address() as AddressInfo).port;
    try {
      const canary = await accounts.plant(who, 'cloned_website', {
        site_url: `http://localhost:${port}/login`,
      });
      snippet = canary.value;
      expect(snippet).toMatch(/^<script>.*<\/script>$/);
      const page = await browser.newPage();
      // localhost is the page's own origin; 127.0.0.1 is the same page on another (the clone).
      await page.goto(`http://localhost:${port}/login`, { waitUntil: 'networkidle' });
      await page.goto(`http://127.0.0.1:${port}/login`, { waitUntil: 'networkidle' });
      await page.close();
      const [alert] = await accounts.alertsAt(path);
      expect(alert!.data).toMatchObject({
        canaryId: canary.canary_id,
        canaryKind: 'cloned_website',
        platform: 'web browser',
      });
      const hits = await accounts.hitsOf(who, canary.canary_id);
      expect(hits).toHaveLength(1);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });
});

describe('a web image canary', () => {
  it('when Chromium renders a page embedding it, then the owner’s image loads and the owner is alerted', async () => {
    const { who, path } = await accounts.account();
    const logo = new PNG({ width: 3, height: 2 });
    logo.data.fill(200);
    const image = PNG.sync.write(logo);
    const canary = await accounts.plant(who, 'web_image', { image: image.toString('base64') });
    expect(canary.value).toMatch(new RegExp(`^${tripwireBase}/i/[\\w-]{24}\\.png$`));
    expect(canary.artifact).toMatchObject({ filename: 'logo.png', content_type: 'image/png' });

    const page = await browser.newPage();
    await page.setContent(`<img id="logo" src="${canary.value}">`);
    await page.waitForFunction('document.getElementById("logo").complete');
    type Img = { naturalWidth: number; naturalHeight: number };
    const size = await page.$eval('#logo', (img) => [
      (img as unknown as Img).naturalWidth,
      (img as unknown as Img).naturalHeight,
    ]);
    expect(size).toEqual([3, 2]);
    await page.close();

    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'web browser' });
    expect(await accounts.hitsOf(who, canary.canary_id)).toHaveLength(1);
  });

  it('when a token nobody planted is loaded, then it gets the transparent GIF a default image canary serves', async () => {
    const { who } = await accounts.account();
    const planted = await accounts.plant(who, 'web_image');
    expect(planted.artifact).toMatchObject({ filename: 'logo.gif', content_type: 'image/gif' });
    const [live, unknown] = await Promise.all([
      fetch(planted.value),
      fetch(`${tripwireBase}/i/nobody-planted-this.gif`),
    ]);
    expect(unknown.headers.get('content-type')).toBe(live.headers.get('content-type'));
    expect(Buffer.from(await unknown.arrayBuffer())).toEqual(Buffer.from(await live.arrayBuffer()));
  });
});

describe('a QR code canary', () => {
  it('when zbarimg reads the downloaded PNG and the phone opens what it read, then it fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'qr_code', { memo: 'sticker on rack 12' });
    const png = await request(t.app).get(canary.artifact!.url).set(bearer(who));
    const dir = mkdtempSync(join(tmpdir(), 'qr-'));
    writeFileSync(join(dir, 'qr-code.png'), png.body as Buffer);
    writeFileSync(join(dir, 'qr-code.svg'), canary.files![0]!.content);
    const { stdout } = await run('zbarimg', ['--raw', '-q', join(dir, 'qr-code.png')]);
    expect(stdout.trim()).toBe(canary.value);

    const phone = await fetch(stdout.trim(), {
      headers: { 'User-Agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)' },
    });
    expect(phone.status).toBe(200);
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, memo: 'sticker on rack 12' });
    expect(await accounts.hitsOf(who, canary.canary_id)).toHaveLength(1);
  });
});

describe('an SVN repository canary', () => {
  it('when the dump is loaded with svnadmin and trunk checked out with svn, then fetching its externals fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'svn');
    expect(canary.value).toMatch(new RegExp(`^${tripwireBase}/v/[\\w-]{24}$`));
    const dir = mkdtempSync(join(tmpdir(), 'svn-'));
    writeFileSync(join(dir, 'repo.svndump'), await download(who, canary));
    await run('svnadmin', ['create', join(dir, 'repo')]);
    await run('sh', ['-c', 'svnadmin load -q "$0/repo" < "$0/repo.svndump"', dir]);
    const checkout = run('svn', [
      'checkout',
      '--non-interactive',
      `file://${join(dir, 'repo')}/trunk`,
      join(dir, 'wc'),
    ]);
    // The checkout itself succeeds; only the external cannot be fetched, as svn reports.
    await expect(checkout).rejects.toMatchObject({
      stderr: expect.stringContaining('E205011'),
    });
    expect(readFileSync(join(dir, 'wc/README.md'), 'utf8')).toContain('deploy-scripts');
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'SVN' });
    const hits = await accounts.hitsOf(who, canary.canary_id);
    expect(hits[0]!.source.user_agent).toMatch(/^SVN\/1\.14/);
    expect(new Set(hits.map((h) => h.threat_event_id)).size).toBe(1);
  });
});

describe('Word and Excel document canaries', () => {
  it('when LibreOffice opens the downloaded .docx and .xlsx, then each fetches its linked picture and fires once', async () => {
    const { who, path } = await accounts.account();
    const word = await accounts.plant(who, 'word_document', { memo: 'HR share' });
    const excel = await accounts.plant(who, 'excel_document', { memo: 'finance backup' });
    expect(word.artifact).toMatchObject({
      filename: expect.stringMatching(/^[\w ]+\.docx$/),
      content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect(excel.artifact!.filename).toMatch(/^[\w ]+\.xlsx$/);
    const dir = mkdtempSync(join(tmpdir(), 'office-'));
    const files = [];
    for (const canary of [word, excel]) {
      const file = await download(who, canary);
      expect(file.subarray(0, 2).toString()).toBe('PK');
      files.push(join(dir, canary.artifact!.filename));
      writeFileSync(files.at(-1)!, file);
    }
    // One LibreOffice start converts both (headless: it opens each as Writer and Calc would).
    await run(
      'soffice',
      ['--headless', '--norestore', '--convert-to', 'pdf', '--outdir', join(dir, 'pdf'), ...files],
      { env: { ...process.env, HOME: dir }, timeout: 120_000 },
    );
    const alerts = await accounts.alertsAt(path, 2);
    expect(alerts.map((a) => a.data.canaryId).sort()).toEqual(
      [word.canary_id, excel.canary_id].sort(),
    );
    for (const alert of alerts) expect(alert.data.platform).toBe('LibreOffice');
    expect(await accounts.hitsOf(who, word.canary_id)).toHaveLength(1);
    expect(await accounts.hitsOf(who, excel.canary_id)).toHaveLength(1);
    // And the documents opened cleanly: their text made it into the PDFs.
    const { stdout } = await run('pdftotext', [
      join(dir, 'pdf', word.artifact!.filename.replace(/\.docx$/, '.pdf')),
      '-',
    ]);
    expect(stdout).toContain(word.artifact!.filename.replace(/\.docx$/, ''));
  });
});

describe('a log4shell canary', () => {
  it('when a Java service with Log4j 2.14.1 logs it, then its lookup fires and the leaked host name is recorded', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'log4shell', { memo: 'support form' });
    expect(canary.value).toMatch(
      new RegExp(`^\\$\\{jndi:ldap://x\\$\\{hostName\\}\\.L4J\\.[a-z2-7]{20}\\.${ZONE}/a\\}$`),
    );
    // A small service built with Maven against log4j-core 2.14.1 from Maven Central.
    const dir = mkdtempSync(join(tmpdir(), 'log4shell-'));
    cpSync(join(__dirname, '../fixtures/log4shell'), dir, { recursive: true });
    await run(
      'mvn',
      ['-q', '-B', 'compile', 'dependency:build-classpath', '-Dmdep.outputFile=target/cp.txt'],
      { cwd: dir, timeout: 300_000 },
    );
    const classpath = `${join(dir, 'target/classes')}:${readFileSync(join(dir, 'target/cp.txt'), 'utf8')}`;
    const ran = await runWithCanaryDns(listeners.ports.dns!, [
      'java',
      '-cp',
      classpath,
      'example.Service',
      canary.value,
    ]);
    expect(ran.code).toBe(0);

    const host = hostname().toLowerCase();
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      canaryKind: 'log4shell',
      platform: `Log4j on ${host}`,
      attacker: { ip: '' },
    });
    const [hit, ...more] = await accounts.hitsOf(who, canary.canary_id);
    expect(hit!.source).toMatchObject({
      via: 'dns',
      resolver: { name: expect.stringMatching(new RegExp(`^x${host}\\.l4j\\.`)) },
    });
    // The JVM may ask for A and AAAA: one event, each lookup a hit of it.
    for (const other of more) expect(other.threat_event_id).toBe(hit!.threat_event_id);
  }, 360_000);
});

/**
 * Acrobat, Explorer and Windows cannot run here: each test reads the artifact as that client is
 * documented to (the open action's host, desktop.ini's icon path with the user's variables
 * expanded, the silent-process-exit monitor's PowerShell), then resolves that name with this
 * machine's real resolver (glibc's getent), whose query reaches the DNS listener.
 */
describe('canaries fired by a DNS lookup of what their client is documented to resolve', () => {
  async function resolveLikeTheClient(name: string) {
    const ran = await runWithCanaryDns(listeners.ports.dns!, ['getent', 'ahostsv4', name]);
    expect(ran.stdout).toContain('192.0.2.10');
  }

  it('when Acrobat opens the PDF (its open action names a host), then the lookup fires; poppler opens it as a plain document', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'pdf_document');
    const pdf = await download(who, canary);
    const dir = mkdtempSync(join(tmpdir(), 'pdf-'));
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    const info = await run('pdfinfo', [join(dir, 'doc.pdf')]);
    expect(info.stdout).toMatch(/Pages:\s+1\n/);
    expect(info.stdout).toMatch(/JavaScript:\s+no\n/);
    expect((await run('pdftotext', [join(dir, 'doc.pdf'), '-'])).stdout).toContain(
      canary.artifact!.filename.replace(/\.pdf$/, ''),
    );
    const host = /\/OpenAction (\d+) 0 R/.test(pdf.toString('latin1'))
      ? /\/S \/URI \/URI \(https:\/\/([^/)]+)\/\)/.exec(pdf.toString('latin1'))![1]!
      : '';
    expect(host).toBe(canary.value);
    await resolveLikeTheClient(host);
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'Acrobat Reader' });
  });

  it('when Explorer shows the unzipped folder, then desktop.ini’s icon host fires and names the user and machine', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'windows_folder');
    const files = unzipSync(new Uint8Array(await download(who, canary)));
    const folder = canary.artifact!.filename.replace(/\.zip$/, '');
    expect(Object.keys(files).sort()).toEqual([`${folder}/`, `${folder}/desktop.ini`]);
    const ini = Buffer.from(files[`${folder}/desktop.ini`]!).toString();
    const env: Record<string, string> = {
      USERNAME: 'alice',
      COMPUTERNAME: 'WS-042',
      USERDOMAIN: 'CORP',
    };
    const unc = /^IconResource=(.+)$/m
      .exec(ini)![1]!
      .replace(/%(\w+)%/g, (_, v: string) => env[v]!);
    const host = /^\\\\([^\\]+)\\/.exec(unc)![1]!;
    expect(host).toBe(`alice.WS-042.CORP.INI.${canary.value}`);
    await resolveLikeTheClient(host);
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      platform: 'Windows Explorer (ws-042, user corp\\alice)',
    });
  });

  it('when the watched command exits, then the monitor’s lookup fires and names the machine and user', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'sensitive_command');
    expect(canary.artifact).toMatchObject({ filename: 'whoami-audit.reg' });
    const reg = (await download(who, canary)).toString();
    expect(reg.startsWith('Windows Registry Editor Version 5.00\r\n')).toBe(true);
    expect(reg).toContain('\\SilentProcessExit\\whoami.exe]');
    // What PowerShell builds from the monitor's expression on machine WS-042 for user alice.
    const expression = /Resolve-DnsName -Name \((.+?)\) -ErrorAction/.exec(reg)![1]!;
    const env: Record<string, string> = { COMPUTERNAME: 'WS-042', USERNAME: 'alice' };
    const host = expression
      .split(' + ')
      .map((part) => (part.startsWith('$env:') ? env[part.slice(5)]! : part.replace(/'/g, '')))
      .join('');
    expect(host).toBe(`WS-042.UN.alice.CMD.${canary.value}`);
    await resolveLikeTheClient(host);
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      platform: 'whoami.exe on ws-042 (user alice)',
    });
  });
});

describe('a MySQL dump canary', () => {
  it('when the mariadb client imports it into a real MariaDB server, then the tables load and its reconnect fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'mysql_dump');
    expect(canary.artifact!.filename).toMatch(/^\w+-\d{4}-\d{2}-\d{2}\.sql$/);
    const dir = mkdtempSync(join(tmpdir(), 'mariadb-'));
    const dump = join(dir, canary.artifact!.filename);
    const sql = (await download(who, canary)).toString();
    writeFileSync(dump, sql);
    const rows = sql.split('),(').length;
    // A throw-away server on a socket only (no TCP port), started and stopped by the test.
    const socket = join(dir, 'sock');
    const server = ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--user=root'];
    await run('mariadb-install-db', [
      ...server,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ]);
    const mariadbd = spawn(
      'mariadbd',
      [
        ...server,
        `--socket=${socket}`,
        '--skip-networking',
        `--pid-file=${join(dir, 'pid')}`,
        `--log-error=${join(dir, 'err.log')}`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const client = ['mariadb', '--no-defaults', `--socket=${socket}`, '-u', 'root'];
      for (let i = 0; i < 100 && !existsSync(socket); i++)
        await new Promise((r) => setTimeout(r, 100));
      await run(client[0]!, [...client.slice(1), '-e', 'CREATE DATABASE production']);
      const ran = await runWithCanaryDns(listeners.ports.dns!, [
        'sh',
        '-c',
        `${client.join(' ')} production < "$0"`,
        dump,
      ]);
      // It resolved the name (192.0.2.10 here) and could not reach that server, as the importer sees.
      expect(ran.stderr).toContain(`Can't connect to server on '${canary.value}'`);
      const { stdout } = await run(client[0]!, [
        ...client.slice(1),
        '-N',
        '-e',
        'SELECT COUNT(*) FROM production.customers',
      ]);
      expect(Number(stdout)).toBe(rows);
    } finally {
      mariadbd.kill();
      await new Promise((resolve) => mariadbd.once('exit', resolve));
    }
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'mysql client' });
  }, 120_000);
});

/**
 * wireguard-go, the userspace WireGuard (its binary is named `wireguard`), built once from the Go
 * module proxy into the tools cache.
 */
const WIREGUARD_GO = 'golang.zx2c4.com/wireguard@v0.0.0-20260522210424-ecfc5a8d5446';

describe('a WireGuard canary', () => {
  it('when wireguard-go connects with the planted config, then the handshake names the config and fires, and the tunnel stays down', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'wireguard', { memo: 'admin laptop' });
    expect(canary.artifact).toMatchObject({ filename: 'office-vpn.conf' });
    expect(canary.value).toContain(`Endpoint = 127.0.0.1:${wireguardPort}`);

    const bin = join(homedir(), '.cache/tripwire-service/wireguard-go');
    await run('go', ['install', WIREGUARD_GO], {
      env: { ...process.env, GOBIN: bin },
      timeout: 300_000,
    });
    const dir = mkdtempSync(join(tmpdir(), 'wg-'));
    const device = `wgc${process.pid % 100_000}`;
    writeFileSync(join(dir, `${device}.conf`), await download(who, canary));
    // wg-quick's own reading of the config (it drops Address and DNS, which `wg` does not take).
    const { stdout: stripped } = await run('wg-quick', ['strip', join(dir, `${device}.conf`)]);
    writeFileSync(join(dir, 'wg.conf'), stripped);
    const address = /^Address = (.+)$/m.exec(canary.value)![1]!;
    const ran = await runWithCanaryDns(
      listeners.ports.dns!,
      [
        'sh',
        '-c',
        `set -e
        rm -f /var/run/wireguard/${device}.sock
        "$0/wireguard" -f ${device} >"$1/wireguard.log" 2>&1 & client=$!
        # A loaded machine can take seconds to bring the device up; say why if it never does.
        for i in $(seq 300); do [ -S /var/run/wireguard/${device}.sock ] && break; sleep 0.1; done
        [ -S /var/run/wireguard/${device}.sock ] || { cat "$1/wireguard.log" >&2; exit 1; }
        wg setconf ${device} "$1/wg.conf"
        ip addr add ${address} dev ${device}
        ip link set ${device} up
        ping -c 1 -W 3 10.8.0.1 || true
        wg show ${device} latest-handshakes
        ip link del ${device}
        wait $client || true`,
        bin,
        dir,
      ],
      { udpPorts: [wireguardPort], timeoutMs: 60_000 },
    );
    // The tunnel never came up: no handshake was answered. (stderr says why, if the script failed.)
    expect(ran).toMatchObject({ stdout: expect.stringMatching(/\t0\n/) });

    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      canaryKind: 'wireguard',
      platform: 'WireGuard client',
      memo: 'admin laptop',
      attacker: { ip: '127.0.0.1' },
    });
    const [hit] = await accounts.hitsOf(who, canary.canary_id);
    expect(hit!.source).toMatchObject({ via: 'wireguard', ip: '127.0.0.1' });
  }, 360_000);

  it('when an initiation nobody can have made, or garbage, arrives, then nothing answers', async () => {
    const udp = createSocket('udp4');
    const answers: Buffer[] = [];
    udp.on('message', (m) => answers.push(m));
    const initiation = Buffer.alloc(148);
    initiation.writeUInt32LE(1);
    for (const bytes of [initiation, Buffer.from('garbage'), Buffer.alloc(2000, 7)]) {
      udp.send(bytes, wireguardPort, '127.0.0.1');
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    udp.close();
    expect(answers).toEqual([]);
  });
});
