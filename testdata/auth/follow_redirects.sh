#!/bin/sh
# A stand-in browser for the sign-in tests: follows the authorization URL and its
# redirects (the fake authorization server answers at once with a 302 to mcpctl's
# loopback callback), so no real browser ever opens.
# Usage (as BROWSER): sh follow_redirects.sh URL
set -eu
if [ "$#" -ne 1 ]; then
  echo "usage: follow_redirects.sh URL" >&2
  exit 2
fi
exec curl -sSfL --max-time 30 --max-redirs 5 -o /dev/null "$1"
