#!/usr/bin/env bash
# CI: Debian's chromium for the browser test of the web page (tests/test_web_page.py), installed
# from the distribution's packages when missing. Playwright drives it; `playwright install`,
# which downloads a browser build of its own, is never run.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "chromium.sh: /usr/bin/chromium is missing and this is not root: the browser test will skip" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
