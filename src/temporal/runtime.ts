import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Routes the SDK's and the core runtime's logs into pino. Call once, before any worker exists. */
export function installTemporalRuntime(logger: Logger): void {
  const sdkLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger('INFO', ({ level, message, meta }) => {
      sdkLogger[LEVELS[level]](meta ?? {}, message);
    }),
  });
}
