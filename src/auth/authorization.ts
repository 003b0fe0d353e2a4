/**
 * The `Authorization` header as RFC 9110 §11.4 defines it: `<scheme> <credentials>`, the scheme
 * compared without regard to letter case (`Bearer`, `bearer`, `BEARER` are one scheme).
 */
export function authorization(
  header: string | undefined,
): { scheme: string; credentials: string } | undefined {
  const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+) +(\S.*?) *$/.exec(header ?? '');
  return match ? { scheme: match[1]!.toLowerCase(), credentials: match[2]! } : undefined;
}
