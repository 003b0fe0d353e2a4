import { once } from 'node:events';
import { createServer } from 'node:net';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** A loopback port nobody listens on now, for the SDK's own metrics exporter. */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * Routes the SDK's and the core runtime's logs into pino and, with `sdkMetrics`, turns on the
 * SDK's Prometheus exporter (task latencies, slots, poll results, sticky cache) on a loopback port,
 * whose address it returns: the worker's `/metrics` serves those lines beside its own, so
 * operators scrape one endpoint. Call once, before any worker exists.
 */
export async function installTemporalRuntime(
  logger: Logger,
  { sdkMetrics }: { sdkMetrics: boolean },
): Promise<string | undefined> {
  const sdkLogger = logger.child({ component: 'temporal' });
  const bindAddress = sdkMetrics ? `127.0.0.1:${await freeLoopbackPort()}` : undefined;
  Runtime.install({
    logger: new DefaultLogger('INFO', ({ level, message, meta }) => {
      // One line per entry: a multi-line message (the workflow bundler's module list) keeps its
      // first line, and the whole of it goes to debug.
      const [first, ...more] = message.split('\n');
      sdkLogger[LEVELS[level]](meta ?? {}, first);
      if (more.length) sdkLogger.debug(meta ?? {}, message);
    }),
    ...(bindAddress && {
      telemetryOptions: {
        metrics: {
          prometheus: {
            bindAddress,
            // Prometheus conventions, so the names read like every other exporter's.
            countersTotalSuffix: true,
            unitSuffix: true,
            useSecondsForDurations: true,
          },
        },
      },
    }),
  });
  return bindAddress;
}
