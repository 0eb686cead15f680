#!/usr/bin/env bash
# Installs the Debian packages gpusched builds and tests with (Debian 12 "bookworm").
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost1.81-dev rapidjson-dev libfmt-dev libyaml-cpp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libre2-dev
  libnghttp2-dev   # HTTP/2 for the agent's gRPC client: the kubelet's PodResources
  curl openssl
  clang   # scripts/thread-safety.sh: clang's -Wthread-safety analysis
  chromium fonts-dejavu-core   # test/http/ui_browser_test.cc: /ui in a real browser, headless
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${packages[@]}"
