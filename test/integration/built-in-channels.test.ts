import request from 'supertest';
import { deliveryListView } from '../../src/alerts/channels.routes';
import { startAlert } from '../../src/alerts/alert-workflows';
import { alertResults, tripwirePayload } from '../support/alerts';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { SmtpListener } from '../support/smtp-listener';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

const BOT_TOKEN = '123456:test-token-abcdefghijklmnop';

let t: TestApp;
let worker: { stop(): Promise<void> };
let smtp: SmtpListener;
let telegram: Receiver;

beforeAll(async () => {
  t = await createTestApp({ config: testConfig() });
  smtp = await SmtpListener.start();
  telegram = await Receiver.start();
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE, {
    smtpUrl: smtp.url,
    smtpFrom: 'Alerts <alerts@tripwire.test>',
    telegramBotToken: BOT_TOKEN,
    telegramApiBase: telegram.url('/'),
  });
});
afterAll(async () => {
  await worker.stop();
  await smtp.stop();
  await telegram.stop();
  await t.close();
});

const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

async function alert(who: SignedIn, suffix = '') {
  const threatEventId = `thr_${who.userId}${suffix}`;
  const handle = await startAlert(t.temporal, {
    accountId: who.userId,
    payload: tripwirePayload(threatEventId),
    threatEventId,
  });
  const { results } = await alertResults(handle);
  return Object.fromEntries(results.map((r) => [r.kind, r]));
}

async function deliveriesOf(who: SignedIn, channelId: string) {
  const res = await request(t.app).get(`/api/alert-channels/${channelId}/deliveries`).set(as(who));
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${res.text}`);
  return deliveryListView.parse(res.body).deliveries;
}

describe('built-in email channel', () => {
  it('when an alert fires, then the account address gets one mail with text and HTML bodies over STARTTLS', async () => {
    const who = await signUpAndLogIn(t.app);
    const { email } = await alert(who);
    expect(email).toMatchObject({ outcome: 'delivered', status: 250 });
    const mails = smtp.received.filter((m) => m.to.includes(who.email));
    expect(mails).toHaveLength(1);
    const [{ mail, secure }] = mails as [(typeof mails)[number]];
    expect(secure).toBe(true);
    expect(mail.subject).toBe('🟠 HIGH: canary fired on test');
    expect(mail.from?.value).toEqual([{ name: 'Alerts', address: 'alerts@tripwire.test' }]);
    expect(mail.text).toContain('Attacker IP: 203.0.113.5');
    expect(mail.text).toContain('A decoy credential was used.');
    expect(mail.html).toContain('<th align="left">Attacker IP</th><td>203.0.113.5</td>');
    expect(mail.headers.get('x-service-event')).toBe('canary.tripwire_triggered');
    expect(await deliveriesOf(who, 'builtin:email')).toMatchObject([
      { outcome: 'delivered', attempts: [{ status: 250 }] },
    ]);
  });

  it('when the mail server refuses the recipient for good (550), then one attempt and a failure', async () => {
    const who = await signUpAndLogIn(t.app);
    smtp.refuse(who.email, 550);
    const { email } = await alert(who);
    expect(email).toMatchObject({ outcome: 'failed', status: 550 });
    expect(smtp.rcptAttempts.filter((a) => a === who.email)).toHaveLength(1);
  });

  it('when the mail server defers (451), then three attempts', async () => {
    const who = await signUpAndLogIn(t.app);
    smtp.refuse(who.email, 451);
    const { email } = await alert(who);
    expect(email).toMatchObject({ outcome: 'failed', status: 451 });
    expect(smtp.rcptAttempts.filter((a) => a === who.email)).toHaveLength(3);
    const [record] = await deliveriesOf(who, 'builtin:email');
    expect(record?.attempts.map((a) => a.status)).toEqual([451, 451, 451]);
  }, 30_000);
});

describe('built-in messaging-chat channel (Telegram Bot API)', () => {
  it('when the account has no chat id, then the chat channel is skipped and the skip is recorded', async () => {
    const who = await signUpAndLogIn(t.app);
    const before = telegram.hits.length;
    const { chat } = await alert(who);
    expect(chat).toMatchObject({
      outcome: 'skipped',
      error: 'not configured (no Telegram chat id in the account settings)',
    });
    expect(telegram.hits.length).toBe(before);
    expect(await deliveriesOf(who, 'builtin:chat')).toMatchObject([
      { outcome: 'skipped', attempts: [] },
    ]);
  });

  it('when the account set its chat id, then sendMessage reaches the Bot API with that chat', async () => {
    const who = await signUpAndLogIn(t.app);
    const chatId = String(-Date.now());
    const set = await request(t.app)
      .patch('/api/settings')
      .set(as(who))
      .send({ telegram_chat_id: chatId });
    expect(set.status).toBe(200);
    const { chat } = await alert(who);
    expect(chat).toMatchObject({ outcome: 'delivered', status: 200 });
    const hits = telegram.hits.filter(
      (h) => (JSON.parse(h.rawBody.toString()) as { chat_id: string }).chat_id === chatId,
    );
    expect(hits).toHaveLength(1);
    expect(hits[0]!.path).toBe(`/bot${BOT_TOKEN}/sendMessage`);
    const body = JSON.parse(hits[0]!.rawBody.toString()) as Record<string, unknown>;
    expect(body).toMatchObject({ parse_mode: 'HTML' });
    expect(body.text).toContain('<b>Attacker IP:</b> 203.0.113.5');
  });
});

describe('built-ins switched off', () => {
  it('when the deployment configures neither, then both are skipped and name the missing setting', async () => {
    const other = await createTestApp({ config: testConfig() });
    const bare = await startTestWorker(other.mongo.db, other.config.TEMPORAL_TASK_QUEUE);
    try {
      const who = await signUpAndLogIn(other.app);
      const threatEventId = `thr_${who.userId}`;
      const handle = await startAlert(other.temporal, {
        accountId: who.userId,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      const { results } = await handle.result();
      expect(results).toEqual([
        expect.objectContaining({
          kind: 'email',
          outcome: 'skipped',
          error: 'not configured (SMTP_URL unset)',
        }),
        expect.objectContaining({
          kind: 'chat',
          outcome: 'skipped',
          error: 'not configured (TELEGRAM_BOT_TOKEN unset)',
        }),
      ]);
      expect(smtp.rcptAttempts).not.toContain(who.email);
    } finally {
      await bare.stop();
      await other.close();
    }
  });
});

describe('/api/settings', () => {
  it('when read first, then the chat id is null; a valid id is stored and cleared again', async () => {
    const who = await signUpAndLogIn(t.app);
    expect((await request(t.app).get('/api/settings').set(as(who))).body).toEqual({
      telegram_chat_id: null,
      community_sharing: false,
    });
    for (const value of ['@alerts_channel', '-1001234567890', null]) {
      const res = await request(t.app).patch('/api/settings').set(as(who)).send({
        telegram_chat_id: value,
      });
      expect(res.body).toEqual({ telegram_chat_id: value, community_sharing: false });
    }
  });

  it.each([
    [{ telegram_chat_id: 'not a chat' }, 'telegram_chat_id'],
    [{ telegram_chat_id: 42 }, 'telegram_chat_id'],
    [{ theme: 'dark' }, 'theme'],
  ])('when the body is %j, then 422 names %s and nothing changes', async (body, field) => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app).patch('/api/settings').set(as(who)).send(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(field);
    expect(
      (await request(t.app).get('/api/settings').set(as(who))).body.telegram_chat_id,
    ).toBeNull();
  });

  it('when an API key calls, then settings:read reads, settings:write writes, and other scopes get 403', async () => {
    const who = await signUpAndLogIn(t.app);
    const reader = await createKey(t.app, who.token, { scopes: ['settings:read'] });
    const writer = await createKey(t.app, who.token, { scopes: ['settings:write'] });
    const key = (k: { key: string }) => ({ 'X-API-Key': k.key });
    expect((await request(t.app).get('/api/settings').set(key(reader))).status).toBe(200);
    const refused = await request(t.app)
      .patch('/api/settings')
      .set(key(reader))
      .send({ telegram_chat_id: '123' });
    expect(refused.status).toBe(403);
    const written = await request(t.app)
      .patch('/api/settings')
      .set(key(writer))
      .send({ telegram_chat_id: '123' });
    expect(written.body).toEqual({ telegram_chat_id: '123', community_sharing: false });
  });

  it('when nobody is signed in, then 401', async () => {
    expect((await request(t.app).get('/api/settings')).status).toBe(401);
  });
});
