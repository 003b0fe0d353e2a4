import express from 'express';
import request from 'supertest';
import { z } from 'zod';
import { DomainError } from '../../src/errors';
import { describeZodError, errorHandler } from '../../src/http/errors';
import { parseQuery } from '../../src/http/validate';

describe('describeZodError', () => {
  const schema = z.object({
    user_message: z.string(),
    nested: z.object({ n: z.number().int() }),
    scopes: z.array(z.string().max(3)).optional(),
  });

  it('when fields are missing or wrong, then each is named with where it is in the body', () => {
    const result = schema.safeParse({ nested: { n: 1.5 }, scopes: ['a', 'b', 'c', 'toolong'] });
    expect(result.success).toBe(false);
    expect(describeZodError(result.error!)).toBe(
      'body.user_message: Required; body.nested.n: Invalid input: expected int, received number; ' +
        'body.scopes[3]: Too big: expected string to have <=3 characters',
    );
  });

  it('when the body itself is wrong, then the message says body', () => {
    const result = schema.safeParse('text');
    expect(describeZodError(result.error!)).toMatch(/^body: /);
  });
});

describe('parseQuery', () => {
  const query = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });

  const refusal = (value: unknown) => {
    try {
      parseQuery(query, value);
    } catch (err) {
      return err;
    }
    throw new Error('expected a refusal');
  };

  it('when a query value is wrong, then the refusal (invalid) names query.<name>', () => {
    expect(refusal({ limit: '0' })).toMatchObject({
      kind: 'invalid',
      detail: 'query.limit: Too small: expected number to be >=1',
    });
  });

  it('when a query parameter is given twice, then the refusal says so rather than "received NaN"', () => {
    const err = refusal({ limit: ['1', '2'] });
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ kind: 'invalid', detail: 'query.limit: given more than once' });
  });

  it('when a query value is no number, then the refusal says a number is expected rather than "received NaN"', () => {
    for (const limit of ['abc', '1e', 'NaN']) {
      expect(refusal({ limit })).toMatchObject({
        kind: 'invalid',
        detail: 'query.limit: Expected a number',
      });
    }
  });

  it('when the query is right, then its parsed values come back', () => {
    expect(parseQuery(query, { limit: '7' })).toEqual({ limit: 7 });
    expect(parseQuery(query, {})).toEqual({ limit: 50 });
  });
});

describe('errorHandler', () => {
  const answerTo = (err: unknown) => {
    const app = express();
    app.use((req, _res, next) => {
      (req as { log?: unknown }).log = { warn: () => undefined, error: () => undefined };
      next();
    });
    app.get('/', () => {
      throw err;
    });
    app.use(errorHandler);
    return request(app).get('/');
  };

  it('when a service throws a domain error, then its kind decides the status and the detail goes out as it is', async () => {
    const res = await answerTo(new DomainError('not_found', 'No trap t1'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'No trap t1' });
  });

  it('when a domain error says when to retry, then Retry-After carries it', async () => {
    const detail = { error: 'burst_limit_exceeded', retry_after_seconds: 7 };
    const res = await answerTo(new DomainError('rate_limited', detail, 7));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.body).toEqual({ detail });
  });

  it('when an answer fails after it began, then the connection is cut rather than the body ending as if complete, and it is logged as such', async () => {
    const logged: string[] = [];
    const app = express();
    app.use((req, _res, next) => {
      (req as { log?: unknown }).log = {
        warn: (_: unknown, message: string) => logged.push(`warn: ${message}`),
        error: (_: unknown, message: string) => logged.push(`error: ${message}`),
      };
      next();
    });
    app.get('/', (_req, res, next) => {
      res.status(200).type('application/json').write('{"records":[');
      setImmediate(() => next(new Error('cursor lost')));
    });
    app.use(errorHandler);

    await expect(request(app).get('/')).rejects.toThrow(/socket hang up|aborted|ECONNRESET/);
    expect(logged).toEqual(['warn: response failed after it began']);
  });

  it('when an unexpected error escapes, then 500 says nothing of its message', async () => {
    const res = await answerTo(new Error('connection string with a password'));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'Internal server error' });
  });
});
