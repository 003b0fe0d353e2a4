#!/usr/bin/env bash
# Installs the Debian packages the tests need, when missing: openssl (the HTTPS receivers'
# throw-away CA), chromium (the console's browser tests; playwright-core never downloads one) and
# postgresql-client (psql, a real client of the decoy Postgres listener).
set -euo pipefail
missing=()
command -v openssl >/dev/null || missing+=(openssl)
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v psql >/dev/null || missing+=(postgresql-client)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get…"
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi
