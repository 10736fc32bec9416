#!/bin/sh
# The image's entry point. `token`, `rebuild` or `verify-billing` as the command runs that
# maintenance CLI, compiled, with the arguments after it:
#   docker compose run --rm --no-deps app token --sub alice --role user
# Anything else runs as given: by default the server (the Dockerfile's CMD).
set -e
# /app in the image: the directory above this file's (a test runs it from the repo).
root="$(cd "$(dirname "$0")/.." && pwd)"
case "$1" in
  token | rebuild | verify-billing)
    cli="$1"
    shift
    exec node "$root/dist/apps/control-plane/src/cli/$cli.js" "$@"
    ;;
esac
exec "$@"
