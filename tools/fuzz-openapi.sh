#!/usr/bin/env bash
# Schemathesis against a running service and its /openapi.json: no 5xx, no undocumented status,
# no undocumented content type, no body that breaks its documented schema. Start the service
# first (`npm run dev`), then:
#   npm run fuzz -- [base URL, default http://127.0.0.1:8080] [max examples per operation, default 10]
# Schemathesis (PyPI) is installed once into ~/.cache/tripwire-service/schemathesis.
set -euo pipefail
BASE="${1:-http://127.0.0.1:8080}"
EXAMPLES="${2:-10}"
VENV="${HOME}/.cache/tripwire-service/schemathesis"
if [ ! -x "$VENV/bin/st" ]; then
  echo "installing schemathesis into $VENV…"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'schemathesis>=4,<5'
fi

json() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
EMAIL="fuzz-$(date +%s)-$RANDOM@example.com"
BODY="{\"email\":\"$EMAIL\",\"password\":\"fuzzing password 12345\"}"
echo "signing up $EMAIL and making an API key with every scope…"
curl -fsS -X POST "$BASE/api/auth/signup" -H 'content-type: application/json' -d "$BODY" >/dev/null
TOKEN=$(curl -fsS -X POST "$BASE/api/auth/login" -H 'content-type: application/json' -d "$BODY" | json token)
KEY=$(curl -fsS -X POST "$BASE/api/auth/generate-key" -H "authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' -d '{}' | json key)

# Logging out would end the session the run authenticates with; schemathesis.toml keeps the run's
# API key from being revoked. A sign-in may wait for the hashing slot behind up to 8 others (seconds
# each on a busy machine), so answers get 30 s rather than Schemathesis's 10.
exec "$VENV/bin/st" --config-file "$(dirname "$0")/schemathesis.toml" run "$BASE/openapi.json" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --exclude-path /api/auth/logout \
  -H "Authorization: Bearer $TOKEN" -H "X-API-Key: $KEY" \
  --max-examples "$EXAMPLES" --workers 2 --request-timeout 30
