import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Hit {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  at: number;
}

/**
 * A real HTTPS receiver on 127.0.0.1 with the test CA's certificate. The path chooses the answer:
 * `/status/<code>` answers that status (3xx with a Location to `/landed`), `/delay/<ms>` answers
 * 200 after that long, `/hang` never answers, `/answer/<n>` answers n bytes of text, `/endless`
 * answers text until the client goes away, anything else 200. Every request is recorded with its raw bytes.
 */
export class Receiver {
  readonly hits: Hit[] = [];
  /** Waiting for a hit that matches: told of each hit as it arrives. */
  private readonly watchers = new Set<(hit: Hit) => void>();
  /** When set, every path answers this status: a receiver that has broken. */
  private brokenWith: number | null = null;
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer({
      cert: readFileSync(process.env.TEST_TLS_CERT!),
      key: readFileSync(process.env.TEST_TLS_KEY!),
    });
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const hit = { path, headers: req.headers, rawBody: Buffer.concat(chunks), at: Date.now() };
        receiver.hits.push(hit);
        for (const watch of receiver.watchers) watch(hit);
        if (path === '/hang') return;
        if (path === '/endless') {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          const more = (): void => {
            if (!res.destroyed) res.write('x'.repeat(16_384), () => setImmediate(more));
          };
          return more();
        }
        const answer = /^\/answer\/(\d+)/.exec(path);
        if (answer) {
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
          return res.end('ok '.repeat(Number(answer[1]) / 3 + 1).slice(0, Number(answer[1])));
        }
        const status = receiver.brokenWith ?? Number(/^\/status\/(\d{3})/.exec(path)?.[1] ?? 200);
        if (status >= 300 && status < 400) res.setHeader('Location', '/landed');
        const delay = Number(/^\/delay\/(\d+)/.exec(path)?.[1] ?? 0);
        setTimeout(() => res.writeHead(status).end(), delay);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  breakWith(status: number | null): void {
    this.brokenWith = status;
  }

  url(path: string): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  hitsOn(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }

  /**
   * The first hit that `matches`, already here or as it arrives: each hit is looked at once, so
   * many waiters cost the process (a benchmark's API may share it) next to nothing.
   */
  arrival(matches: (hit: Hit) => boolean): Promise<Hit> {
    const here = this.hits.find(matches);
    if (here) return Promise.resolve(here);
    return new Promise((resolve) => {
      const watch = (hit: Hit) => {
        if (!matches(hit)) return;
        this.watchers.delete(watch);
        resolve(hit);
      };
      this.watchers.add(watch);
    });
  }

  /** The hits on `path` once there are `count` of them, or whatever came within the time. */
  async waitFor(path: string, count = 1, timeoutMs = 20_000): Promise<Hit[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.hitsOn(path).length < count && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return this.hitsOn(path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}
