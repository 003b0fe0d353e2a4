import pino, { type Logger } from 'pino';
import type { Config } from './config';

export type { Logger };

export function createLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>,
  name: string,
): Logger {
  return pino({
    name,
    level: config.LOG_LEVEL,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'],
    transport: config.LOG_PRETTY
      ? {
          target: 'pino-pretty',
          // One line per entry; a request's line is its message and its request id.
          options: {
            translateTime: 'HH:MM:ss.l',
            ignore: 'pid,hostname,req.method,req.url,res,responseTime',
            singleLine: true,
          },
        }
      : undefined,
  });
}
