/** Paths of a throw-away CA and server certificate, as environment variables. */
export function makeTestCa(
  dir: string,
  days?: number,
): {
  NODE_EXTRA_CA_CERTS: string;
  TEST_TLS_CERT: string;
  TEST_TLS_KEY: string;
};
