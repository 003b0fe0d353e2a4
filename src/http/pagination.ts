import { z, type ZodType } from 'zod';

/**
 * One pagination style for every list route: `limit`, an opaque `cursor` taken from the previous
 * page's `next_cursor` (null on the last page). The cursor encodes where the page ended, so
 * clients never build one.
 */
export const limitSchema = z.coerce.number().int().min(1).max(200).default(50);

export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** A cursor parameter whose position must match `position`; anything else is a 422. */
export function cursorSchema<T extends ZodType>(position: T) {
  return z.string().transform((value, ctx): z.output<T> => {
    try {
      const parsed = position.safeParse(JSON.parse(Buffer.from(value, 'base64url').toString()));
      if (parsed.success) return parsed.data;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'not a cursor from a previous page' });
    return z.NEVER;
  });
}

const seq = z.coerce.number().int().min(1);

/**
 * Pages of sealed records, newest first: the cursor holds the `seq` to continue below. `before`
 * (that `seq` itself, from the older `next` / `next_before`) is still accepted for one release.
 */
export const seqPageQuery = z.object({
  limit: limitSchema,
  cursor: cursorSchema(z.number().int().min(1)).optional(),
  before: seq.optional(),
});
export const DEPRECATED_SEQ_QUERY = ['before'] as const;

/** The `seq` a page continues below, from the cursor or the deprecated `before`. */
export const continueBelow = (query: { cursor?: number; before?: number }) =>
  query.cursor ?? query.before;

export const seqCursor = (nextBefore: number | null) =>
  nextBefore === null ? null : encodeCursor(nextBefore);
