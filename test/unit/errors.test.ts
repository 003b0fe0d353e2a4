import { z } from 'zod';
import { describeZodError } from '../../src/http/errors';

describe('describeZodError', () => {
  const schema = z.object({ user_message: z.string(), nested: z.object({ n: z.number().int() }) });

  it('when fields are missing or wrong, then each is named with its path', () => {
    const result = schema.safeParse({ nested: { n: 1.5 } });
    expect(result.success).toBe(false);
    expect(describeZodError(result.error!)).toBe(
      'user_message: Required; nested.n: Invalid input: expected int, received number',
    );
  });

  it('when the body itself is wrong, then the message says body', () => {
    const result = schema.safeParse('text');
    expect(describeZodError(result.error!)).toMatch(/^body: /);
  });
});
