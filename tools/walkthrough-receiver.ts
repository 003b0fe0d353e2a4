/**
 * The README walkthrough's alert receiver: HTTPS on 127.0.0.1:$RECEIVER_PORT (default 9443) with
 * the throw-away certificate `npm run dev` makes in `.data/tls/` ($RECEIVER_TLS), whose CA the dev
 * API and worker trust. Every POST is checked with the receivers' own package,
 * `packages/webhook-verify`, and the channel secret ($WEBHOOK_SECRET): a good one prints
 * `verified: <event> <delivery id>` and ends the process (exit 0); a bad one is answered 401 and
 * waited past. No signed alert within $RECEIVER_TIMEOUT_S seconds (default 60): exit 1. A GET
 * answers 200, so a script can wait until the receiver listens.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { verifyDelivery } from '../packages/webhook-verify/src/index';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('WEBHOOK_SECRET is not set: it must be the secret of the alert channel');
  process.exit(2);
}
const port = Number(process.env.RECEIVER_PORT ?? 9443);
const tlsDir = process.env.RECEIVER_TLS ?? join(process.env.DATA_DIR ?? '.data', 'tls');
const timeoutS = Number(process.env.RECEIVER_TIMEOUT_S ?? 60);

const server = createServer({
  cert: readFileSync(join(tlsDir, 'server.pem')),
  key: readFileSync(join(tlsDir, 'server.key')),
});

server.on('request', (req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('waiting for a signed alert\n');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => void verifyAndAnswer(secret));
  async function verifyAndAnswer(key: string) {
    // The raw bytes, never re-serialised JSON: that is what the signature covers.
    const check = await verifyDelivery(key, req.headers, Buffer.concat(chunks));
    if (!check.ok) {
      console.error(`rejected: ${check.reason}`);
      res.writeHead(401).end(check.reason);
      return;
    }
    res.writeHead(200).end(() => {
      console.log(`verified: ${check.event} ${check.deliveryId}`);
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  }
});

server.listen(port, '127.0.0.1');
setTimeout(() => {
  console.error(
    `no signed alert within ${timeoutS} s: is there a webhook channel to https://127.0.0.1:${port}/ with this secret?`,
  );
  process.exit(1);
}, timeoutS * 1_000).unref();
