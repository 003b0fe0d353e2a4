"""Verify a tripwire-service webhook delivery in Python (standard library only).

    ok, reason = verify(secret, headers, raw_body)

`headers` is any mapping with case-insensitive lookups or lower-case keys; `raw_body` is the exact
bytes received (never re-serialised JSON).
"""
import hashlib
import hmac
import time

TOLERANCE_SECONDS = 300


def verify(secret: str, headers, raw_body: bytes, now: float | None = None):
    get = lambda name: headers.get(name) or headers.get(name.lower())
    timestamp = get("X-Service-Timestamp")
    signature = get("X-Service-Signature")
    if not timestamp or not timestamp.isdigit():
        return False, "missing or non-numeric timestamp"
    if abs((now if now is not None else time.time()) - int(timestamp)) > TOLERANCE_SECONDS:
        return False, "timestamp outside the 300 s window"
    if not signature:
        return False, "missing signature"
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256)
    if not hmac.compare_digest("sha256=" + mac.hexdigest(), signature):
        return False, "signature does not match"
    return True, None
