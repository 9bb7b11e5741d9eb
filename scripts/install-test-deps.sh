#!/usr/bin/env bash
# What the test suite needs from Debian, installed only when missing, saying what it installs.
# Run it as often as you like: with everything present it installs nothing and exits 0.
# Not root and something missing: it prints the one apt-get line to run and exits 1, so a missing
# package is one clear message instead of a hundred red tests.
set -euo pipefail

# Each package, and how to tell it is there: the file or command the tests actually run.
present() {
  case "$1" in
    # The browser tests drive Debian's Chromium in its headless build (test/e2e/browser.ts says
    # why); the benches measure the studio in the full browser.
    chromium) command -v chromium >/dev/null 2>&1 ;;
    chromium-headless-shell) [ -x /usr/lib/chromium/chromium-headless-shell ] ;;
    # The PostgreSQL store's tests start throwaway clusters from Debian's binaries (initdb and
    # pg_ctl in a temp dir on a free port); the package alone is enough, no service is started.
    postgresql) compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null ;;
    # Real peers for the SIP and monitoring tests, so they test against what a SIP engineer or
    # an operator runs: sipp (with its RTP pcaps) places the calls of test/phone/sip; baresip,
    # kamailio, prometheus; espeak-ng and sox make and convert callers' audio.
    sip-tester) command -v sipp >/dev/null 2>&1 ;;
    baresip-core) command -v baresip >/dev/null 2>&1 ;;
    kamailio) command -v kamailio >/dev/null 2>&1 || [ -x /usr/sbin/kamailio ] ;;
    # kamailio's TLS module: the trunk Voxflow registers to over TLS (sips:).
    kamailio-tls-modules) compgen -G '/usr/lib/*/kamailio/modules/tls.so' >/dev/null ;;
    prometheus) command -v prometheus >/dev/null 2>&1 ;;
    espeak-ng) command -v espeak-ng >/dev/null 2>&1 ;;
    sox) command -v sox >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

PACKAGES=(chromium chromium-headless-shell postgresql sip-tester baresip-core kamailio kamailio-tls-modules prometheus espeak-ng sox)

missing=()
for package in "${PACKAGES[@]}"; do
  present "$package" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "The tests need Debian packages that are not installed: ${missing[*]}" >&2
  echo "Install them, then run the tests again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "Installing what the tests need: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
for package in "${missing[@]}"; do
  if ! present "$package"; then
    echo "apt-get installed $package, but what the tests run from it is still missing." >&2
    exit 1
  fi
done
echo "Installed: ${missing[*]}"
