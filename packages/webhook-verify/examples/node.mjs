// Plain Node (node:http), as an ES module: read the raw bytes, verify, then parse.
import { createServer } from 'node:http';
import { verifyDelivery } from '@tripwire/webhook-verify';

const secret = process.env.WEBHOOK_SECRET;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks);
    const check = await verifyDelivery(secret, req.headers, raw);
    if (!check.ok) {
      res.writeHead(401).end(check.reason);
      return;
    }
    const alert = JSON.parse(raw.toString('utf8'));
    console.log(`${check.deliveryId} ${alert.data.alertLevel}`);
    res.writeHead(200).end();
  });
});
server.listen(Number(process.env.PORT ?? 3000), () =>
  console.log(`listening on ${server.address().port}`),
);
