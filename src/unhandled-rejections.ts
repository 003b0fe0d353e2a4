import type { Logger } from './logger';

/**
 * A promise that failed with no handler is a bug to fix, not a reason to stop answering every
 * other request: logged as an error, and the process keeps serving (Node's default would exit).
 * Every promise is meant to be handled where it starts; this is the net under that rule.
 */
export function logUnhandledRejections(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    log.error({ err: reason }, 'unhandled promise rejection; still serving');
  });
}
